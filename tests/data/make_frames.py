#!/usr/bin/env python3
"""Writes the golden frames in tests/data/frames/ and the seed corpora in tests/fuzz/corpus/.

Run from anywhere: python3 tests/data/make_frames.py. The outputs are committed; rerun only
when adding vectors. good_*.bin are whole frames that must decode (frame and header);
bad_*.bin are whole frames whose frame or header decoding must fail.
Sources: docs/protocol.md, sections JSON header (Java, Go headers) and ROCKETMQ binary header
(binary example); jsoncpp FastWriter (C++).
"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRAMES = os.path.join(ROOT, "tests", "data", "frames")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

JAVA_REQ = (b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA",'
            b'"opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}')
JAVA_RESP = (b'{"code":17,"flag":1,"language":"JAVA","opaque":1,"remark":"No topic route info in '
             b'name server for the topic: TopicTest\\nSee https://rocketmq.apache.org/docs/'
             b'bestPractice/06FAQ for further details.","serializeTypeCurrentRPC":"JSON",'
             b'"version":479}')
GO_REQ = (b'{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"",'
          b'"extFields":{"topic":"TopicTest"}}')
CPP_REQ = (b'{"code":105,"extFields":{"AccessKey":"","ONSChannelKey":"","Signature":"",'
           b'"topic":"TopicTest"},"flag":0,"language":"CPP","opaque":7,"remark":"",'
           b'"version":313}\n')
REGISTER_REQ = (b'{"code":103,"extFields":{"brokerAddr":"10.0.0.1:10911","brokerId":"0",'
                b'"brokerName":"broker-a","bodyCrc32":"0","clusterName":"DefaultCluster",'
                b'"compressed":"false","haServerAddr":"10.0.0.1:10912","enableActingMaster":'
                b'"false","heartbeatTimeoutMillis":"120000"},"flag":0,"language":"JAVA",'
                b'"opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}')
REGISTER_BODY = b'{"filterServerList":[],"topicConfigSerializeWrapper":{}}'


def frame(header, body=b"", stype=0):
    return struct.pack(">II", 4 + len(header) + len(body), (stype << 24) | len(header)) + header + body


def bstr(s, short=False):
    return (struct.pack(">h", len(s)) if short else struct.pack(">i", len(s))) + s


def bin_header(code, lang, version, opaque, flag, remark=b"", ext=(), ext_len=None, remark_len=None):
    area = b"".join(bstr(k, True) + bstr(v) for k, v in ext)
    h = struct.pack(">hbhii", code, lang, version, opaque, flag)
    h += struct.pack(">i", len(remark) if remark_len is None else remark_len) + remark
    h += struct.pack(">i", len(area) if ext_len is None else ext_len) + area
    return h


BIN_REQ = bin_header(105, 0, 479, 1, 0, ext=[(b"topic", b"TopicTest")])
BIN_RESP = bin_header(17, 0, 479, 1, 1, remark=b"No topic route info in name server for the topic: X\n"
                      b"See https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
assert frame(BIN_REQ, stype=1) == bytes.fromhex(
    "0000002d01000029006900 01df 00000001 00000000 00000000 00000014"
    "0005746f706963 00000009546f70696354657374".replace(" ", ""))

MANY_EXT_JSON = b'{"code":1,"extFields":{' + b",".join(
    b'"k%d":"v"' % i for i in range(257)) + b"}}"
MANY_EXT_BIN = bin_header(1, 0, 0, 0, 0, ext=[(b"k%d" % i, b"v") for i in range(257)])

GOOD = {
    "good_java_request": frame(JAVA_REQ),
    "good_java_response_missing_topic": frame(JAVA_RESP),
    "good_binary_request": frame(BIN_REQ, stype=1),
    "good_binary_response": frame(BIN_RESP, stype=1),
    "good_go_request": frame(GO_REQ),
    "good_cpp_request": frame(CPP_REQ),
    "good_register_with_body": frame(REGISTER_REQ, REGISTER_BODY),
    "good_binary_with_body": frame(BIN_REQ, b"\x00\x01\x02body", stype=1),
}
BAD = {
    "bad_header_array": frame(b'[1,2,3]'),
    "bad_header_string": frame(b'"code"'),
    "bad_header_number": frame(b'105'),
    "bad_header_not_json": frame(b'{"code":105,'),
    "bad_header_garbage_after": frame(JAVA_REQ + b'x'),
    "bad_code_object": frame(b'{"code":{}}'),
    "bad_flag_bool": frame(b'{"code":1,"flag":true}'),
    "bad_ext_array": frame(b'{"code":1,"extFields":[]}'),
    "bad_many_ext_json": frame(MANY_EXT_JSON),
    "bad_bin_short": frame(BIN_REQ[:20], stype=1),
    "bad_bin_remark_past_end": frame(bin_header(1, 0, 0, 0, 0, remark=b"ab", remark_len=1000), stype=1),
    "bad_bin_remark_negative": frame(bin_header(1, 0, 0, 0, 0, remark_len=-1), stype=1),
    "bad_bin_ext_past_end": frame(bin_header(1, 0, 0, 0, 0, ext=[(b"a", b"b")], ext_len=100), stype=1),
    "bad_bin_ext_negative": frame(bin_header(1, 0, 0, 0, 0, ext_len=-5), stype=1),
    "bad_bin_key_past_area": frame(BIN_REQ[:21] + b"\x7f\xff" + BIN_REQ[23:], stype=1),
    "bad_many_ext_bin": frame(MANY_EXT_BIN, stype=1),
    "bad_total_zero": b"\x00\x00\x00\x00\x00\x00\x00\x00",
    "bad_total_three": b"\x00\x00\x00\x03\x00\x00\x00\x00",
    "bad_total_huge": b"\xff\xff\xff\xff\x00\x00\x00\x00",
    "bad_type_two": b"\x00\x00\x00\x06\x02\x00\x00\x02{}",
    "bad_header_longer_than_frame": b"\x00\x00\x00\x06\x00\x00\x00\x03{}",
}


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for name, data in {**GOOD, **BAD}.items():
        write(FRAMES, name + ".bin", data)
    fc = os.path.join(CORPUS, "frame")
    for name, data in {**GOOD, **BAD}.items():
        if name.startswith("good_") or name.startswith("bad_total") or name.startswith("bad_type") \
                or name.startswith("bad_header_longer"):
            write(fc, name, data)
    write(fc, "pipelined", b"".join(GOOD.values()))
    write(fc, "truncated", GOOD["good_java_request"][:50])
    write(fc, "good_then_bad", GOOD["good_go_request"] + BAD["bad_total_huge"])
    for name, data in {**GOOD, **BAD}.items():
        stype = data[4] if len(data) >= 8 else 255
        hlen = int.from_bytes(data[5:8], "big") if len(data) >= 8 else 0
        header = data[8:8 + hlen]
        if name.startswith("bad_total") or name.startswith("bad_type") or name.startswith("bad_header_longer"):
            continue
        write(os.path.join(CORPUS, "header_json" if stype == 0 else "header_binary"), name, header)
    hj = os.path.join(CORPUS, "header_json")
    write(hj, "escapes", b'{"code":1,"remark":"a\\u0001\\u007f\\u0085\\u2028\\/\\"\\\\\\b\\f\\n\\r\\t\xc3\xa9",'
          b'"extFields":{"n":12,"b":true,"z":null,"s":"x"},"language":9}')
    write(hj, "numeric_strings", b'{"code":"105","opaque":"-7","flag":null,"version":"","language":"RUST"}')
    write(hj, "fast_subset", b'{"code":1,"extFields":{"a":true,"b":null,"c":"x","a":false},"language":null,'
          b'"remark":null,"x":123,"y":"z","z":null,"serializeTypeCurrentRPC":"JSON","opaque":-2147483648}\n')
    write(hj, "duplicate_keys", b'{"code":1,"code":2,"extFields":{"a":"1"},"extFields":{"a":"2","a":"3"}}')


if __name__ == "__main__":
    main()
