#!/usr/bin/python3
"""Independent protobuf check (run by independent.test.ts with Debian's /usr/bin/python3).

Reads cases from a JSON file: each names an upstream message, gives an object in its Kubernetes
JSON form and the bytes svc's encoder produced. With the classes protoc generated from the
committed proto/ files, this script builds the same object from the JSON itself (the Python
protobuf runtime encodes it), parses svc's bytes, and compares the two messages field by field.
It answers with the Python-encoded bytes so the test can decode them with svc's decoder.

The JSON-to-message mapping here is written from upstream's conventions, not from svc's code:
field names are the JSON names; Go's embedded structs (json:",inline") are the fields named
below; Time/MicroTime are RFC 3339; IntOrString, Quantity, RawExtension/FieldsV1 and the
ExtraValue-style wrappers have their JSON forms; bytes are base64.
"""
import base64
import datetime
import importlib
import json
import re
import struct
import sys

MAGIC = b'k8s\x00'
# Upstream's embedded (json:",inline") struct fields among the served types.
INLINE = {'volumeSource', 'persistentVolumeSource', 'ephemeralContainerCommon', 'handler', 'localObjectReference', 'rule', 'ruleWithOperations', 'ingressRuleValue'}
# .proto field names that differ from the JSON names.
JSON_NAME = {'uID': 'uid', 'Webhooks': 'webhooks', 'Expression': 'expression', 'Name': 'name'}
META = 'k8s.io.apimachinery.pkg.apis.meta.v1.'


def message_class(full_name):
    pkg, name = full_name.rsplit('.', 1)
    module = importlib.import_module(pkg + '.generated_pb2')
    return getattr(module, name)


def parse_time(text, micro):
    t = datetime.datetime.fromisoformat(text.replace('z', 'Z'))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    delta = t - epoch
    seconds = delta.days * 86400 + delta.seconds
    return seconds, (delta.microseconds * 1000 if micro else 0)


DURATION_UNITS = {'ns': 1, 'us': 1000, 'µs': 1000, 'ms': 10**6, 's': 10**9, 'm': 60 * 10**9, 'h': 3600 * 10**9}


def parse_duration(text):
    """Go's time.ParseDuration for the unsigned forms the fixtures use ("15s", "1m30s", "1.5s")."""
    total = 0
    for number, unit in re.findall(r'(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)', text):
        total += float(number) * DURATION_UNITS[unit]
    return round(total)


class Unused(Exception):
    pass


def fill(msg, obj, path):
    """Sets msg's fields from the JSON object; returns the JSON keys it consumed."""
    used = set()
    for field in msg.DESCRIPTOR.fields:
        # Embedded Go structs are messages; a scalar of the same name (RuntimeClass.handler) is a plain field.
        if field.name in INLINE and field.message_type is not None:
            sub = getattr(msg, field.name)
            sub.SetInParent()  # Go writes an embedded struct even when empty
            used |= fill(sub, obj, path)
            continue
        key = JSON_NAME.get(field.name, field.name)
        if key not in obj or obj[key] is None:
            continue
        used.add(key)
        set_field(msg, field, obj[key], f'{path}.{key}')
    return used


def set_field(msg, field, value, path):
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name['value']
        target = getattr(msg, field.name)
        for k, v in value.items():
            if value_field.message_type is None:
                target[k] = scalar(value_field, v)
            else:
                set_message(target[k], v, f'{path}[{k}]')
        return
    if field.label == field.LABEL_REPEATED:
        target = getattr(msg, field.name)
        for i, v in enumerate(value):
            if field.message_type is None:
                target.append(scalar(field, v))
            else:
                set_message(target.add(), v, f'{path}[{i}]')
        return
    if field.message_type is None:
        setattr(msg, field.name, scalar(field, value))
    else:
        set_message(getattr(msg, field.name), value, path)


def scalar(field, v):
    if field.type == field.TYPE_BYTES:
        return base64.b64decode(v)
    if field.type == field.TYPE_DOUBLE:
        return float(v)
    return v


def set_message(msg, value, path):
    name = msg.DESCRIPTOR.full_name
    msg.SetInParent()
    if name in (META + 'Time', META + 'MicroTime'):
        msg.seconds, msg.nanos = parse_time(value, name.endswith('MicroTime'))
    elif name == META + 'Duration':
        msg.duration = parse_duration(value)
    elif name == 'k8s.io.apimachinery.pkg.api.resource.Quantity':
        msg.string = str(value)
    elif name == 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
        # Go writes all three fields.
        is_str = isinstance(value, str)
        msg.type, msg.intVal, msg.strVal = (1 if is_str else 0), (0 if is_str else value), (value if is_str else '')
    elif name in ('k8s.io.apimachinery.pkg.runtime.RawExtension', META + 'FieldsV1'):
        raw = json.dumps(value, separators=(',', ':'), ensure_ascii=False).encode()
        setattr(msg, msg.DESCRIPTOR.fields[0].name, raw)
    elif [f.name for f in msg.DESCRIPTOR.fields] == ['items'] and isinstance(value, list):
        msg.items.extend(value)  # ExtraValue, AttestationValue: a list as a map value
    else:
        used = fill(msg, value, path)
        extra = set(value) - used
        if extra:
            raise Unused(f'{path}: no field for {sorted(extra)} in {name}')


def envelope(api_version, kind, raw):
    runtime = importlib.import_module('k8s.io.apimachinery.pkg.runtime.generated_pb2')
    unknown = runtime.Unknown(raw=raw, contentEncoding='', contentType='')
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    return MAGIC + unknown.SerializeToString()


def unwrap(data):
    runtime = importlib.import_module('k8s.io.apimachinery.pkg.runtime.generated_pb2')
    if not data.startswith(MAGIC):
        raise ValueError('missing magic')
    unknown = runtime.Unknown()
    unknown.ParseFromString(data[4:])
    return unknown


def check(case):
    cls = message_class(case['message'])
    obj = case['json']
    built = cls()
    used = fill(built, obj, '')
    extra = set(obj) - used - {'apiVersion', 'kind'}
    if extra:
        raise Unused(f'no field for {sorted(extra)} in {case["message"]}')
    ours = base64.b64decode(case['ours'])
    out = {'name': case['name']}
    if case.get('watch'):
        (length,) = struct.unpack('>I', ours[:4])
        out['frameLength'] = length == len(ours) - 4
        event = message_class(META + 'WatchEvent')()
        event.ParseFromString(ours[4:])
        out['watchType'] = event.type
        ours = event.object.raw
    unknown = unwrap(ours)
    out['typeMeta'] = [unknown.typeMeta.apiVersion, unknown.typeMeta.kind]
    parsed = cls()
    parsed.ParseFromString(unknown.raw)
    out['equal'] = parsed == built
    if not out['equal']:
        out['ours'] = str(parsed)[:4000]
        out['python'] = str(built)[:4000]
    # Deterministic serialization writes map entries in key order, as Go (and svc) do.
    out['sameBytes'] = built.SerializeToString(deterministic=True) == unknown.raw
    python = envelope(obj.get('apiVersion', ''), obj.get('kind', ''), built.SerializeToString())
    if case.get('watch'):
        event = message_class(META + 'WatchEvent')(type=case['watch'])
        event.object.raw = python
        body = event.SerializeToString()
        python = struct.pack('>I', len(body)) + body
    out['pythonBytes'] = base64.b64encode(python).decode()
    return out


def main():
    sys.path.insert(0, sys.argv[1])
    cases = json.load(open(sys.argv[2]))
    results = []
    for case in cases:
        try:
            results.append(check(case))
        except Exception as err:  # reported per case, so one failure does not hide the others
            results.append({'name': case['name'], 'error': f'{type(err).__name__}: {err}'})
    json.dump(results, sys.stdout)


main()
