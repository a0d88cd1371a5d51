/**
 * The one place that loads `jose` (JWT/JWS/JWKS). jose 6 ships only as an ES module; Node 20.19+
 * loads it through require(), but TypeScript's node16 CommonJS mode refuses a static import of
 * an ES module, so the types come from a type-only import and the value from require().
 */
import type * as Jose from 'jose' with { 'resolution-mode': 'import' };

// eslint-disable-next-line @typescript-eslint/no-require-imports -- jose is ES-module only and a static import is refused here (see above)
const jose = require('jose') as typeof Jose;

export const { SignJWT, jwtVerify, decodeJwt, decodeProtectedHeader, importJWK, exportJWK, createLocalJWKSet, errors: joseErrors } = jose;
export type JWTPayload = Jose.JWTPayload;
export type JWK = Jose.JWK;
export type JSONWebKeySet = Jose.JSONWebKeySet;
export type JWTVerifyResult = Jose.JWTVerifyResult;
