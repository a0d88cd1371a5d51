#!/usr/bin/python3
"""An independent CBOR codec for test/e2e/apiserver/cbor.test.ts: Debian's python3-cbor2.

  cbor_client.py encode [--byte-strings]   JSON on stdin -> one CBOR item on stdout
  cbor_client.py decode                    one CBOR item on stdin -> {"value", "facts"} JSON
  cbor_client.py decode-seq                a CBOR Sequence on stdin -> a list of those

encode writes the item in the self-described tag 55799; an object {"$tag22": base64} becomes
tag 22 around the raw bytes (how Go clients write a []byte); --byte-strings writes every string
and map key as a byte string, as client-go does, else as text strings, as a generic client does.
decode maps the item to JSON the way a Kubernetes client reads it (byte strings are UTF-8 text,
tag 22 bytes are base64) and reports what it saw on the wire in "facts": whether the item was
self-described, the string types of map keys and of string values, and the tags met.
"""
import base64
import io
import json
import sys

import cbor2

SELF_DESCRIBED = b"\xd9\xd9\xf7"


def to_cbor(v, byte_strings):
    if isinstance(v, dict):
        if set(v) == {"$tag22"}:
            return cbor2.CBORTag(22, base64.b64decode(v["$tag22"]))
        return {to_cbor(k, byte_strings): to_cbor(x, byte_strings) for k, x in v.items()}
    if isinstance(v, list):
        return [to_cbor(x, byte_strings) for x in v]
    if isinstance(v, str) and byte_strings:
        return v.encode("utf-8")
    return v


def to_json(v, facts):
    if isinstance(v, cbor2.CBORTag):
        facts["tags"].add(v.tag)
        if v.tag == 22 and isinstance(v.value, bytes):
            return base64.b64encode(v.value).decode("ascii")
        return to_json(v.value, facts)
    if isinstance(v, bytes):
        facts["strings"].add("bytes")
        return v.decode("utf-8")
    if isinstance(v, str):
        facts["strings"].add("text")
        return v
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            facts["keys"].add("bytes" if isinstance(k, bytes) else "text" if isinstance(k, str) else type(k).__name__)
            out[k.decode("utf-8") if isinstance(k, bytes) else k] = to_json(x, facts)
        return out
    if isinstance(v, list):
        return [to_json(x, facts) for x in v]
    if isinstance(v, float):
        facts["floats"] = True
    return v


def item(value, raw):
    facts = {"keys": set(), "strings": set(), "tags": set()}
    out = to_json(value, facts)
    return {
        "value": out,
        "facts": {
            "selfDescribed": raw.startswith(SELF_DESCRIBED),
            "keys": sorted(facts["keys"]),
            "strings": sorted(facts["strings"]),
            "tags": sorted(facts["tags"]),
        },
    }


def main():
    mode = sys.argv[1]
    data = sys.stdin.buffer.read()
    if mode == "encode":
        value = to_cbor(json.loads(data), "--byte-strings" in sys.argv[2:])
        sys.stdout.buffer.write(cbor2.dumps(cbor2.CBORTag(55799, value)))
        return
    # tag 55799 is kept as a tag (it is reported, and to_json unwraps it).
    tag_hook = lambda decoder, tag: tag  # noqa: E731
    if mode == "decode":
        fp = io.BytesIO(data)
        value = cbor2.CBORDecoder(fp, tag_hook=tag_hook).decode()
        if fp.tell() != len(data):
            raise SystemExit(f"{len(data) - fp.tell()} bytes after the item")
        json.dump(item(value, data), sys.stdout)
        return
    if mode == "decode-seq":
        fp = io.BytesIO(data)
        items = []
        while fp.tell() < len(data):
            start = fp.tell()
            value = cbor2.CBORDecoder(fp, tag_hook=tag_hook).decode()
            items.append(item(value, data[start:fp.tell()]))
        json.dump(items, sys.stdout)
        return
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
