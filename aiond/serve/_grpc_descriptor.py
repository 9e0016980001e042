"""aiond/serve/proto/inference.proto compiled to a FileDescriptorProto, and
the message classes built from it at run time in a private descriptor pool
(protobuf's runtime only: no generated code whose version must match the
runtime's, and no clash with another copy of the ``inference`` messages,
e.g. tritonclient's, in the same process).

Regenerate DATA after editing the .proto (grpcio-tools is needed only then)::

    python -m grpc_tools.protoc -Iaiond/serve/proto --descriptor_set_out=/tmp/fds.bin \
        aiond/serve/proto/inference.proto
    python aiond/serve/_grpc_descriptor.py /tmp/fds.bin
"""
import base64
import os
import sys

DATA = (
    "Cg9pbmZlcmVuY2UucHJvdG8SCWluZmVyZW5jZSITChFTZXJ2ZXJMaXZlUmVxdWVzdCIoChJTZXJ2ZXJMaXZlUmVz"
    "cG9uc2USEgoEbGl2ZRgBIAEoCFIEbGl2ZSIUChJTZXJ2ZXJSZWFkeVJlcXVlc3QiKwoTU2VydmVyUmVhZHlSZXNw"
    "b25zZRIUCgVyZWFkeRgBIAEoCFIFcmVhZHkiQQoRTW9kZWxSZWFkeVJlcXVlc3QSEgoEbmFtZRgBIAEoCVIEbmFt"
    "ZRIYCgd2ZXJzaW9uGAIgASgJUgd2ZXJzaW9uIioKEk1vZGVsUmVhZHlSZXNwb25zZRIUCgVyZWFkeRgBIAEoCFIF"
    "cmVhZHkiFwoVU2VydmVyTWV0YWRhdGFSZXF1ZXN0ImYKFlNlcnZlck1ldGFkYXRhUmVzcG9uc2USEgoEbmFtZRgB"
    "IAEoCVIEbmFtZRIYCgd2ZXJzaW9uGAIgASgJUgd2ZXJzaW9uEh4KCmV4dGVuc2lvbnMYAyADKAlSCmV4dGVuc2lv"
    "bnMiRAoUTW9kZWxNZXRhZGF0YVJlcXVlc3QSEgoEbmFtZRgBIAEoCVIEbmFtZRIYCgd2ZXJzaW9uGAIgASgJUgd2"
    "ZXJzaW9uIs8CChVNb2RlbE1ldGFkYXRhUmVzcG9uc2USEgoEbmFtZRgBIAEoCVIEbmFtZRIaCgh2ZXJzaW9ucxgC"
    "IAMoCVIIdmVyc2lvbnMSGgoIcGxhdGZvcm0YAyABKAlSCHBsYXRmb3JtEkcKBmlucHV0cxgEIAMoCzIvLmluZmVy"
    "ZW5jZS5Nb2RlbE1ldGFkYXRhUmVzcG9uc2UuVGVuc29yTWV0YWRhdGFSBmlucHV0cxJJCgdvdXRwdXRzGAUgAygL"
    "Mi8uaW5mZXJlbmNlLk1vZGVsTWV0YWRhdGFSZXNwb25zZS5UZW5zb3JNZXRhZGF0YVIHb3V0cHV0cxpWCg5UZW5z"
    "b3JNZXRhZGF0YRISCgRuYW1lGAEgASgJUgRuYW1lEhoKCGRhdGF0eXBlGAIgASgJUghkYXRhdHlwZRIUCgVzaGFw"
    "ZRgDIAMoA1IFc2hhcGUi1wEKDkluZmVyUGFyYW1ldGVyEh8KCmJvb2xfcGFyYW0YASABKAhIAFIJYm9vbFBhcmFt"
    "EiEKC2ludDY0X3BhcmFtGAIgASgDSABSCmludDY0UGFyYW0SIwoMc3RyaW5nX3BhcmFtGAMgASgJSABSC3N0cmlu"
    "Z1BhcmFtEiMKDGRvdWJsZV9wYXJhbRgEIAEoAUgAUgtkb3VibGVQYXJhbRIjCgx1aW50NjRfcGFyYW0YBSABKARI"
    "AFILdWludDY0UGFyYW1CEgoQcGFyYW1ldGVyX2Nob2ljZSLDAgoTSW5mZXJUZW5zb3JDb250ZW50cxIjCg1ib29s"
    "X2NvbnRlbnRzGAEgAygIUgxib29sQ29udGVudHMSIQoMaW50X2NvbnRlbnRzGAIgAygFUgtpbnRDb250ZW50cxIl"
    "Cg5pbnQ2NF9jb250ZW50cxgDIAMoA1INaW50NjRDb250ZW50cxIjCg11aW50X2NvbnRlbnRzGAQgAygNUgx1aW50"
    "Q29udGVudHMSJwoPdWludDY0X2NvbnRlbnRzGAUgAygEUg51aW50NjRDb250ZW50cxIjCg1mcDMyX2NvbnRlbnRz"
    "GAYgAygCUgxmcDMyQ29udGVudHMSIwoNZnA2NF9jb250ZW50cxgHIAMoAVIMZnA2NENvbnRlbnRzEiUKDmJ5dGVz"
    "X2NvbnRlbnRzGAggAygMUg1ieXRlc0NvbnRlbnRzIp0IChFNb2RlbEluZmVyUmVxdWVzdBIdCgptb2RlbF9uYW1l"
    "GAEgASgJUgltb2RlbE5hbWUSIwoNbW9kZWxfdmVyc2lvbhgCIAEoCVIMbW9kZWxWZXJzaW9uEg4KAmlkGAMgASgJ"
    "UgJpZBJMCgpwYXJhbWV0ZXJzGAQgAygLMiwuaW5mZXJlbmNlLk1vZGVsSW5mZXJSZXF1ZXN0LlBhcmFtZXRlcnNF"
    "bnRyeVIKcGFyYW1ldGVycxJFCgZpbnB1dHMYBSADKAsyLS5pbmZlcmVuY2UuTW9kZWxJbmZlclJlcXVlc3QuSW5m"
    "ZXJJbnB1dFRlbnNvclIGaW5wdXRzElEKB291dHB1dHMYBiADKAsyNy5pbmZlcmVuY2UuTW9kZWxJbmZlclJlcXVl"
    "c3QuSW5mZXJSZXF1ZXN0ZWRPdXRwdXRUZW5zb3JSB291dHB1dHMSLAoScmF3X2lucHV0X2NvbnRlbnRzGAcgAygM"
    "UhByYXdJbnB1dENvbnRlbnRzGs0CChBJbmZlcklucHV0VGVuc29yEhIKBG5hbWUYASABKAlSBG5hbWUSGgoIZGF0"
    "YXR5cGUYAiABKAlSCGRhdGF0eXBlEhQKBXNoYXBlGAMgAygDUgVzaGFwZRJdCgpwYXJhbWV0ZXJzGAQgAygLMj0u"
    "aW5mZXJlbmNlLk1vZGVsSW5mZXJSZXF1ZXN0LkluZmVySW5wdXRUZW5zb3IuUGFyYW1ldGVyc0VudHJ5UgpwYXJh"
    "bWV0ZXJzEjoKCGNvbnRlbnRzGAUgASgLMh4uaW5mZXJlbmNlLkluZmVyVGVuc29yQ29udGVudHNSCGNvbnRlbnRz"
    "GlgKD1BhcmFtZXRlcnNFbnRyeRIQCgNrZXkYASABKAlSA2tleRIvCgV2YWx1ZRgCIAEoCzIZLmluZmVyZW5jZS5J"
    "bmZlclBhcmFtZXRlclIFdmFsdWU6AjgBGvMBChpJbmZlclJlcXVlc3RlZE91dHB1dFRlbnNvchISCgRuYW1lGAEg"
    "ASgJUgRuYW1lEmcKCnBhcmFtZXRlcnMYAiADKAsyRy5pbmZlcmVuY2UuTW9kZWxJbmZlclJlcXVlc3QuSW5mZXJS"
    "ZXF1ZXN0ZWRPdXRwdXRUZW5zb3IuUGFyYW1ldGVyc0VudHJ5UgpwYXJhbWV0ZXJzGlgKD1BhcmFtZXRlcnNFbnRy"
    "eRIQCgNrZXkYASABKAlSA2tleRIvCgV2YWx1ZRgCIAEoCzIZLmluZmVyZW5jZS5JbmZlclBhcmFtZXRlclIFdmFs"
    "dWU6AjgBGlgKD1BhcmFtZXRlcnNFbnRyeRIQCgNrZXkYASABKAlSA2tleRIvCgV2YWx1ZRgCIAEoCzIZLmluZmVy"
    "ZW5jZS5JbmZlclBhcmFtZXRlclIFdmFsdWU6AjgBIt8FChJNb2RlbEluZmVyUmVzcG9uc2USHQoKbW9kZWxfbmFt"
    "ZRgBIAEoCVIJbW9kZWxOYW1lEiMKDW1vZGVsX3ZlcnNpb24YAiABKAlSDG1vZGVsVmVyc2lvbhIOCgJpZBgDIAEo"
    "CVICaWQSTQoKcGFyYW1ldGVycxgEIAMoCzItLmluZmVyZW5jZS5Nb2RlbEluZmVyUmVzcG9uc2UuUGFyYW1ldGVy"
    "c0VudHJ5UgpwYXJhbWV0ZXJzEkkKB291dHB1dHMYBSADKAsyLy5pbmZlcmVuY2UuTW9kZWxJbmZlclJlc3BvbnNl"
    "LkluZmVyT3V0cHV0VGVuc29yUgdvdXRwdXRzEi4KE3Jhd19vdXRwdXRfY29udGVudHMYBiADKAxSEXJhd091dHB1"
    "dENvbnRlbnRzGtACChFJbmZlck91dHB1dFRlbnNvchISCgRuYW1lGAEgASgJUgRuYW1lEhoKCGRhdGF0eXBlGAIg"
    "ASgJUghkYXRhdHlwZRIUCgVzaGFwZRgDIAMoA1IFc2hhcGUSXwoKcGFyYW1ldGVycxgEIAMoCzI/LmluZmVyZW5j"
    "ZS5Nb2RlbEluZmVyUmVzcG9uc2UuSW5mZXJPdXRwdXRUZW5zb3IuUGFyYW1ldGVyc0VudHJ5UgpwYXJhbWV0ZXJz"
    "EjoKCGNvbnRlbnRzGAUgASgLMh4uaW5mZXJlbmNlLkluZmVyVGVuc29yQ29udGVudHNSCGNvbnRlbnRzGlgKD1Bh"
    "cmFtZXRlcnNFbnRyeRIQCgNrZXkYASABKAlSA2tleRIvCgV2YWx1ZRgCIAEoCzIZLmluZmVyZW5jZS5JbmZlclBh"
    "cmFtZXRlclIFdmFsdWU6AjgBGlgKD1BhcmFtZXRlcnNFbnRyeRIQCgNrZXkYASABKAlSA2tleRIvCgV2YWx1ZRgC"
    "IAEoCzIZLmluZmVyZW5jZS5JbmZlclBhcmFtZXRlclIFdmFsdWU6AjgBIoUBChhNb2RlbFN0cmVhbUluZmVyUmVz"
    "cG9uc2USIwoNZXJyb3JfbWVzc2FnZRgBIAEoCVIMZXJyb3JNZXNzYWdlEkQKDmluZmVyX3Jlc3BvbnNlGAIgASgL"
    "Mh0uaW5mZXJlbmNlLk1vZGVsSW5mZXJSZXNwb25zZVINaW5mZXJSZXNwb25zZSJGChZNb2RlbFN0YXRpc3RpY3NS"
    "ZXF1ZXN0EhIKBG5hbWUYASABKAlSBG5hbWUSGAoHdmVyc2lvbhgCIAEoCVIHdmVyc2lvbiI5ChFTdGF0aXN0aWNE"
    "dXJhdGlvbhIUCgVjb3VudBgBIAEoBFIFY291bnQSDgoCbnMYAiABKARSAm5zIvIDCg9JbmZlclN0YXRpc3RpY3MS"
    "NgoHc3VjY2VzcxgBIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIHc3VjY2VzcxIwCgRmYWlsGAIg"
    "ASgLMhwuaW5mZXJlbmNlLlN0YXRpc3RpY0R1cmF0aW9uUgRmYWlsEjIKBXF1ZXVlGAMgASgLMhwuaW5mZXJlbmNl"
    "LlN0YXRpc3RpY0R1cmF0aW9uUgVxdWV1ZRJBCg1jb21wdXRlX2lucHV0GAQgASgLMhwuaW5mZXJlbmNlLlN0YXRp"
    "c3RpY0R1cmF0aW9uUgxjb21wdXRlSW5wdXQSQQoNY29tcHV0ZV9pbmZlchgFIAEoCzIcLmluZmVyZW5jZS5TdGF0"
    "aXN0aWNEdXJhdGlvblIMY29tcHV0ZUluZmVyEkMKDmNvbXB1dGVfb3V0cHV0GAYgASgLMhwuaW5mZXJlbmNlLlN0"
    "YXRpc3RpY0R1cmF0aW9uUg1jb21wdXRlT3V0cHV0EjkKCWNhY2hlX2hpdBgHIAEoCzIcLmluZmVyZW5jZS5TdGF0"
    "aXN0aWNEdXJhdGlvblIIY2FjaGVIaXQSOwoKY2FjaGVfbWlzcxgIIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNE"
    "dXJhdGlvblIJY2FjaGVNaXNzIoACChRJbmZlckJhdGNoU3RhdGlzdGljcxIdCgpiYXRjaF9zaXplGAEgASgEUgli"
    "YXRjaFNpemUSQQoNY29tcHV0ZV9pbnB1dBgCIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIMY29t"
    "cHV0ZUlucHV0EkEKDWNvbXB1dGVfaW5mZXIYAyABKAsyHC5pbmZlcmVuY2UuU3RhdGlzdGljRHVyYXRpb25SDGNv"
    "bXB1dGVJbmZlchJDCg5jb21wdXRlX291dHB1dBgEIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIN"
    "Y29tcHV0ZU91dHB1dCK/AgoPTW9kZWxTdGF0aXN0aWNzEhIKBG5hbWUYASABKAlSBG5hbWUSGAoHdmVyc2lvbhgC"
    "IAEoCVIHdmVyc2lvbhIlCg5sYXN0X2luZmVyZW5jZRgDIAEoBFINbGFzdEluZmVyZW5jZRInCg9pbmZlcmVuY2Vf"
    "Y291bnQYBCABKARSDmluZmVyZW5jZUNvdW50EicKD2V4ZWN1dGlvbl9jb3VudBgFIAEoBFIOZXhlY3V0aW9uQ291"
    "bnQSQwoPaW5mZXJlbmNlX3N0YXRzGAYgASgLMhouaW5mZXJlbmNlLkluZmVyU3RhdGlzdGljc1IOaW5mZXJlbmNl"
    "U3RhdHMSQAoLYmF0Y2hfc3RhdHMYByADKAsyHy5pbmZlcmVuY2UuSW5mZXJCYXRjaFN0YXRpc3RpY3NSCmJhdGNo"
    "U3RhdHMiVgoXTW9kZWxTdGF0aXN0aWNzUmVzcG9uc2USOwoLbW9kZWxfc3RhdHMYASADKAsyGi5pbmZlcmVuY2Uu"
    "TW9kZWxTdGF0aXN0aWNzUgptb2RlbFN0YXRzIroBChhNb2RlbFJlcG9zaXRvcnlQYXJhbWV0ZXISHwoKYm9vbF9w"
    "YXJhbRgBIAEoCEgAUglib29sUGFyYW0SIQoLaW50NjRfcGFyYW0YAiABKANIAFIKaW50NjRQYXJhbRIjCgxzdHJp"
    "bmdfcGFyYW0YAyABKAlIAFILc3RyaW5nUGFyYW0SIQoLYnl0ZXNfcGFyYW0YBCABKAxIAFIKYnl0ZXNQYXJhbUIS"
    "ChBwYXJhbWV0ZXJfY2hvaWNlIlcKFlJlcG9zaXRvcnlJbmRleFJlcXVlc3QSJwoPcmVwb3NpdG9yeV9uYW1lGAEg"
    "ASgJUg5yZXBvc2l0b3J5TmFtZRIUCgVyZWFkeRgCIAEoCFIFcmVhZHkiygEKF1JlcG9zaXRvcnlJbmRleFJlc3Bv"
    "bnNlEkUKBm1vZGVscxgBIAMoCzItLmluZmVyZW5jZS5SZXBvc2l0b3J5SW5kZXhSZXNwb25zZS5Nb2RlbEluZGV4"
    "UgZtb2RlbHMaaAoKTW9kZWxJbmRleBISCgRuYW1lGAEgASgJUgRuYW1lEhgKB3ZlcnNpb24YAiABKAlSB3ZlcnNp"
    "b24SFAoFc3RhdGUYAyABKAlSBXN0YXRlEhYKBnJlYXNvbhgEIAEoCVIGcmVhc29uIp8CChpSZXBvc2l0b3J5TW9k"
    "ZWxMb2FkUmVxdWVzdBInCg9yZXBvc2l0b3J5X25hbWUYASABKAlSDnJlcG9zaXRvcnlOYW1lEh0KCm1vZGVsX25h"
    "bWUYAiABKAlSCW1vZGVsTmFtZRJVCgpwYXJhbWV0ZXJzGAMgAygLMjUuaW5mZXJlbmNlLlJlcG9zaXRvcnlNb2Rl"
    "bExvYWRSZXF1ZXN0LlBhcmFtZXRlcnNFbnRyeVIKcGFyYW1ldGVycxpiCg9QYXJhbWV0ZXJzRW50cnkSEAoDa2V5"
    "GAEgASgJUgNrZXkSOQoFdmFsdWUYAiABKAsyIy5pbmZlcmVuY2UuTW9kZWxSZXBvc2l0b3J5UGFyYW1ldGVyUgV2"
    "YWx1ZToCOAEiHQobUmVwb3NpdG9yeU1vZGVsTG9hZFJlc3BvbnNlIqMCChxSZXBvc2l0b3J5TW9kZWxVbmxvYWRS"
    "ZXF1ZXN0EicKD3JlcG9zaXRvcnlfbmFtZRgBIAEoCVIOcmVwb3NpdG9yeU5hbWUSHQoKbW9kZWxfbmFtZRgCIAEo"
    "CVIJbW9kZWxOYW1lElcKCnBhcmFtZXRlcnMYAyADKAsyNy5pbmZlcmVuY2UuUmVwb3NpdG9yeU1vZGVsVW5sb2Fk"
    "UmVxdWVzdC5QYXJhbWV0ZXJzRW50cnlSCnBhcmFtZXRlcnMaYgoPUGFyYW1ldGVyc0VudHJ5EhAKA2tleRgBIAEo"
    "CVIDa2V5EjkKBXZhbHVlGAIgASgLMiMuaW5mZXJlbmNlLk1vZGVsUmVwb3NpdG9yeVBhcmFtZXRlclIFdmFsdWU6"
    "AjgBIh8KHVJlcG9zaXRvcnlNb2RlbFVubG9hZFJlc3BvbnNlMucHChRHUlBDSW5mZXJlbmNlU2VydmljZRJLCgpT"
    "ZXJ2ZXJMaXZlEhwuaW5mZXJlbmNlLlNlcnZlckxpdmVSZXF1ZXN0Gh0uaW5mZXJlbmNlLlNlcnZlckxpdmVSZXNw"
    "b25zZSIAEk4KC1NlcnZlclJlYWR5Eh0uaW5mZXJlbmNlLlNlcnZlclJlYWR5UmVxdWVzdBoeLmluZmVyZW5jZS5T"
    "ZXJ2ZXJSZWFkeVJlc3BvbnNlIgASSwoKTW9kZWxSZWFkeRIcLmluZmVyZW5jZS5Nb2RlbFJlYWR5UmVxdWVzdBod"
    "LmluZmVyZW5jZS5Nb2RlbFJlYWR5UmVzcG9uc2UiABJXCg5TZXJ2ZXJNZXRhZGF0YRIgLmluZmVyZW5jZS5TZXJ2"
    "ZXJNZXRhZGF0YVJlcXVlc3QaIS5pbmZlcmVuY2UuU2VydmVyTWV0YWRhdGFSZXNwb25zZSIAElQKDU1vZGVsTWV0"
    "YWRhdGESHy5pbmZlcmVuY2UuTW9kZWxNZXRhZGF0YVJlcXVlc3QaIC5pbmZlcmVuY2UuTW9kZWxNZXRhZGF0YVJl"
    "c3BvbnNlIgASSwoKTW9kZWxJbmZlchIcLmluZmVyZW5jZS5Nb2RlbEluZmVyUmVxdWVzdBodLmluZmVyZW5jZS5N"
    "b2RlbEluZmVyUmVzcG9uc2UiABJbChBNb2RlbFN0cmVhbUluZmVyEhwuaW5mZXJlbmNlLk1vZGVsSW5mZXJSZXF1"
    "ZXN0GiMuaW5mZXJlbmNlLk1vZGVsU3RyZWFtSW5mZXJSZXNwb25zZSIAKAEwARJaCg9Nb2RlbFN0YXRpc3RpY3MS"
    "IS5pbmZlcmVuY2UuTW9kZWxTdGF0aXN0aWNzUmVxdWVzdBoiLmluZmVyZW5jZS5Nb2RlbFN0YXRpc3RpY3NSZXNw"
    "b25zZSIAEloKD1JlcG9zaXRvcnlJbmRleBIhLmluZmVyZW5jZS5SZXBvc2l0b3J5SW5kZXhSZXF1ZXN0GiIuaW5m"
    "ZXJlbmNlLlJlcG9zaXRvcnlJbmRleFJlc3BvbnNlIgASZgoTUmVwb3NpdG9yeU1vZGVsTG9hZBIlLmluZmVyZW5j"
    "ZS5SZXBvc2l0b3J5TW9kZWxMb2FkUmVxdWVzdBomLmluZmVyZW5jZS5SZXBvc2l0b3J5TW9kZWxMb2FkUmVzcG9u"
    "c2UiABJsChVSZXBvc2l0b3J5TW9kZWxVbmxvYWQSJy5pbmZlcmVuY2UuUmVwb3NpdG9yeU1vZGVsVW5sb2FkUmVx"
    "dWVzdBooLmluZmVyZW5jZS5SZXBvc2l0b3J5TW9kZWxVbmxvYWRSZXNwb25zZSIAYgZwcm90bzM="
)


def messages():
    """{message name: class} of the ``inference`` package."""
    from google.protobuf import descriptor_pb2, descriptor_pool
    try:
        from google.protobuf.message_factory import GetMessageClass
    except ImportError:  # pragma: no cover - protobuf < 4.22
        from google.protobuf.message_factory import MessageFactory
        GetMessageClass = MessageFactory().GetPrototype
    fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode("".join(DATA)))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    out = {}
    for m in fd.message_type:
        out[m.name] = GetMessageClass(pool.FindMessageTypeByName("inference." + m.name))
    return out


def _write(fds_path):     # pragma: no cover - a development tool
    from google.protobuf import descriptor_pb2
    import textwrap
    with open(fds_path, "rb") as f:
        (fd,) = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file
    b = base64.b64encode(fd.SerializeToString()).decode()
    data = "DATA = (\n" + "\n".join('    "%s"' % l for l in textwrap.wrap(b, 88)) + "\n)"
    path = os.path.abspath(__file__)
    with open(path) as f:
        src = f.read()
    start = src.index("DATA = (\n")
    end = src.index("\n)", start) + 2
    with open(path, "w") as f:
        f.write(src[:start] + data + src[end:])


if __name__ == "__main__":  # pragma: no cover
    _write(sys.argv[1])
