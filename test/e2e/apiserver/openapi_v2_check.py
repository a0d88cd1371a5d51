#!/usr/bin/python3
"""Independent check of /openapi/v2 as protobuf (run by openapi-protobuf.test.ts with Debian's
/usr/bin/python3 and python3-protobuf, python3-yaml).

Arguments: the directory where protoc wrote the Python classes of proto/gnostic/openapiv2, the
served JSON document, the served protobuf bytes. Builds gnostic's openapi.v2.Document from the JSON
with the rules gnostic applies (JSON keys are the snake_case .proto field names, `$ref` is `_ref`,
`x-` keys are vendor extensions whose Any holds the value as YAML, maps are repeated Named*
entries, the oneof wrappers of parameters, responses, additionalProperties, type and items),
written from the .proto and the Swagger 2.0 format, not from svc's code. Prints a JSON report:
whether the served bytes parse, whether they are Python's own deterministic serialization of what
they parse to (field order, no zero scalars, no unknown fields), and whether, with every YAML value
compared as data, they are the document the JSON describes.
"""
import difflib
import importlib
import json
import re
import sys

import yaml
from google.protobuf import text_format

sys.path.insert(0, sys.argv[1])
pb = importlib.import_module('gnostic.openapiv2.OpenAPIv2_pb2')


def canon(value):
    return json.dumps(value, sort_keys=True)


def snake(key):
    if key == '$ref':
        return '_ref'
    return re.sub(r'(?<!^)([A-Z])', r'_\1', key).lower()


def extension(msg, key, value):
    ext = msg.vendor_extension.add()
    ext.name = key
    ext.value.yaml = canon(value)


def parameter(item, p):
    if '$ref' in p:
        fill(item.json_reference, p)
    elif p['in'] == 'body':
        fill(item.parameter.body_parameter, p)
    else:
        where = {'header': 'header', 'formData': 'form_data', 'query': 'query', 'path': 'path'}[p['in']]
        fill(getattr(item.parameter.non_body_parameter, where + '_parameter_sub_schema'), p)


def named(entries, obj, value):
    for name, v in obj.items():
        e = entries.add()
        e.name = name
        value(e.value, v)


def special(msg, key, value):
    """The keys whose JSON shape is not the message's: returns True when handled."""
    kind = msg.DESCRIPTOR.name
    if kind == 'Document' and key == 'paths':
        for path, item in value.items():
            if path.startswith('x-'):
                extension(msg.paths, path, item)
            else:
                e = msg.paths.path.add()
                e.name = path
                fill(e.value, item)
        msg.paths.SetInParent()
        return True
    if kind == 'Document' and key == 'definitions':
        named(msg.definitions.additional_properties, value, fill)
        msg.definitions.SetInParent()
        return True
    if kind == 'Schema':
        if key == 'properties':
            named(msg.properties.additional_properties, value, fill)
            msg.properties.SetInParent()
            return True
        if key == 'additionalProperties':
            if isinstance(value, bool):
                msg.additional_properties.boolean = value
            else:
                fill(msg.additional_properties.schema, value)
            return True
        if key == 'type':
            msg.type.value.extend([value] if isinstance(value, str) else value)
            return True
        if key == 'items':
            for s in value if isinstance(value, list) else [value]:
                fill(msg.items.schema.add(), s)
            return True
    if key == 'parameters' and kind in ('Operation', 'PathItem'):
        for p in value:
            parameter(msg.parameters.add(), p)
        return True
    if kind == 'Operation' and key == 'responses':
        for code, r in value.items():
            if code.startswith('x-'):
                extension(msg.responses, code, r)
                continue
            e = msg.responses.response_code.add()
            e.name = code
            if '$ref' in r:
                fill(e.value.json_reference, r)
            else:
                fill(e.value.response, r)
        msg.responses.SetInParent()
        return True
    if kind == 'Response' and key == 'schema':
        fill(msg.schema.schema, value)
        return True
    return False


def fill(msg, obj):
    msg.SetInParent()
    fields = msg.DESCRIPTOR.fields_by_name
    for key, value in obj.items():
        if key.startswith('x-') and 'vendor_extension' in fields:
            extension(msg, key, value)
            continue
        if special(msg, key, value):
            continue
        field = fields.get(snake(key))
        if field is None:
            raise KeyError(f'{msg.DESCRIPTOR.name} has no field for {key}')
        if field.message_type is not None and field.message_type.name == 'Any':
            if field.label == field.LABEL_REPEATED:
                for v in value:
                    getattr(msg, field.name).add().yaml = canon(v)
            else:
                getattr(msg, field.name).yaml = canon(value)
        elif field.message_type is not None:
            if field.label == field.LABEL_REPEATED:
                for v in value:
                    fill(getattr(msg, field.name).add(), v)
            else:
                fill(getattr(msg, field.name), value)
        elif field.label == field.LABEL_REPEATED:
            getattr(msg, field.name).extend(value)
        else:
            setattr(msg, field.name, value)


def canon_anys(msg):
    """Every Any's YAML replaced by its value as canonical JSON (what kubectl reads is the data)."""
    if msg.DESCRIPTOR.name == 'Any':
        msg.yaml = canon(yaml.safe_load(msg.yaml))
        return
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        for m in value if field.label == field.LABEL_REPEATED else [value]:
            canon_anys(m)


def main():
    doc = json.load(open(sys.argv[2]))
    served = open(sys.argv[3], 'rb').read()
    report = {}
    ours = pb.Document()
    try:
        ours.ParseFromString(served)
    except Exception as e:  # noqa: BLE001 - reported to the test
        print(json.dumps({'parsed': False, 'error': str(e)}))
        return
    report['parsed'] = True
    report['deterministic'] = ours.SerializeToString(deterministic=True) == served
    report['definitions'] = len(ours.definitions.additional_properties)
    report['paths'] = len(ours.paths.path)
    expected = pb.Document()
    fill(expected, doc)
    canon_anys(ours)
    report['equal'] = ours.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    if not report['equal']:
        diff = difflib.unified_diff(text_format.MessageToString(expected).splitlines(), text_format.MessageToString(ours).splitlines(), 'expected', 'served', lineterm='', n=2)
        report['diff'] = '\n'.join(list(diff)[:60])
    # What kubectl reads to find a kind's schema: each definition's group-version-kind.
    report['kinds'] = []
    for d in ours.definitions.additional_properties:
        for e in d.value.vendor_extension:
            if e.name == 'x-kubernetes-group-version-kind':
                report['kinds'] += [f"{g['group']}/{g['version']}/{g['kind']}" for g in json.loads(e.value.yaml)]
    print(json.dumps(report))


main()
