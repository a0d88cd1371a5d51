import { setCsrRequestor } from '../registry/types/certificatesigningrequests';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';

/**
 * Sets a new CertificateSigningRequest's spec.username, uid, groups and extra from the
 * authenticated creator, as upstream's CSR strategy does: what the client wrote there is replaced,
 * so nobody can claim system:bootstrappers to get node credentials auto-approved.
 */
export class CsrRequestor implements AdmissionPlugin {
  readonly name = 'CSRRequestor';

  mutate(a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'CREATE' && a.type.group === 'certificates.svc.io' && a.type.resource === 'certificatesigningrequests' && a.object) {
      setCsrRequestor(a.object, a.user);
    }
    return Promise.resolve();
  }
}
