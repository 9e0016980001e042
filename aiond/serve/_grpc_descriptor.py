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
    "Mh0uaW5mZXJlbmNlLk1vZGVsSW5mZXJSZXNwb25zZVINaW5mZXJSZXNwb25zZSJmCgpNb2RlbElucHV0EhIKBG5h"
    "bWUYASABKAlSBG5hbWUSMAoJZGF0YV90eXBlGAIgASgOMhMuaW5mZXJlbmNlLkRhdGFUeXBlUghkYXRhVHlwZRIS"
    "CgRkaW1zGAQgAygDUgRkaW1zImcKC01vZGVsT3V0cHV0EhIKBG5hbWUYASABKAlSBG5hbWUSMAoJZGF0YV90eXBl"
    "GAIgASgOMhMuaW5mZXJlbmNlLkRhdGFUeXBlUghkYXRhVHlwZRISCgRkaW1zGAMgAygDUgRkaW1zIugBChRNb2Rl"
    "bER5bmFtaWNCYXRjaGluZxIwChRwcmVmZXJyZWRfYmF0Y2hfc2l6ZRgBIAMoBVIScHJlZmVycmVkQmF0Y2hTaXpl"
    "Ej8KHG1heF9xdWV1ZV9kZWxheV9taWNyb3NlY29uZHMYAiABKARSGW1heFF1ZXVlRGVsYXlNaWNyb3NlY29uZHMS"
    "JwoPcHJpb3JpdHlfbGV2ZWxzGAQgASgEUg5wcmlvcml0eUxldmVscxI0ChZkZWZhdWx0X3ByaW9yaXR5X2xldmVs"
    "GAUgASgEUhRkZWZhdWx0UHJpb3JpdHlMZXZlbCKmAgoLTW9kZWxDb25maWcSEgoEbmFtZRgBIAEoCVIEbmFtZRIa"
    "CghwbGF0Zm9ybRgCIAEoCVIIcGxhdGZvcm0SGAoHYmFja2VuZBgRIAEoCVIHYmFja2VuZBIkCg5tYXhfYmF0Y2hf"
    "c2l6ZRgEIAEoBVIMbWF4QmF0Y2hTaXplEisKBWlucHV0GAUgAygLMhUuaW5mZXJlbmNlLk1vZGVsSW5wdXRSBWlu"
    "cHV0Ei4KBm91dHB1dBgGIAMoCzIWLmluZmVyZW5jZS5Nb2RlbE91dHB1dFIGb3V0cHV0EkoKEGR5bmFtaWNfYmF0"
    "Y2hpbmcYCyABKAsyHy5pbmZlcmVuY2UuTW9kZWxEeW5hbWljQmF0Y2hpbmdSD2R5bmFtaWNCYXRjaGluZyJCChJN"
    "b2RlbENvbmZpZ1JlcXVlc3QSEgoEbmFtZRgBIAEoCVIEbmFtZRIYCgd2ZXJzaW9uGAIgASgJUgd2ZXJzaW9uIkUK"
    "E01vZGVsQ29uZmlnUmVzcG9uc2USLgoGY29uZmlnGAEgASgLMhYuaW5mZXJlbmNlLk1vZGVsQ29uZmlnUgZjb25m"
    "aWciRgoWTW9kZWxTdGF0aXN0aWNzUmVxdWVzdBISCgRuYW1lGAEgASgJUgRuYW1lEhgKB3ZlcnNpb24YAiABKAlS"
    "B3ZlcnNpb24iOQoRU3RhdGlzdGljRHVyYXRpb24SFAoFY291bnQYASABKARSBWNvdW50Eg4KAm5zGAIgASgEUgJu"
    "cyLyAwoPSW5mZXJTdGF0aXN0aWNzEjYKB3N1Y2Nlc3MYASABKAsyHC5pbmZlcmVuY2UuU3RhdGlzdGljRHVyYXRp"
    "b25SB3N1Y2Nlc3MSMAoEZmFpbBgCIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIEZmFpbBIyCgVx"
    "dWV1ZRgDIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIFcXVldWUSQQoNY29tcHV0ZV9pbnB1dBgE"
    "IAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblIMY29tcHV0ZUlucHV0EkEKDWNvbXB1dGVfaW5mZXIY"
    "BSABKAsyHC5pbmZlcmVuY2UuU3RhdGlzdGljRHVyYXRpb25SDGNvbXB1dGVJbmZlchJDCg5jb21wdXRlX291dHB1"
    "dBgGIAEoCzIcLmluZmVyZW5jZS5TdGF0aXN0aWNEdXJhdGlvblINY29tcHV0ZU91dHB1dBI5CgljYWNoZV9oaXQY"
    "ByABKAsyHC5pbmZlcmVuY2UuU3RhdGlzdGljRHVyYXRpb25SCGNhY2hlSGl0EjsKCmNhY2hlX21pc3MYCCABKAsy"
    "HC5pbmZlcmVuY2UuU3RhdGlzdGljRHVyYXRpb25SCWNhY2hlTWlzcyKAAgoUSW5mZXJCYXRjaFN0YXRpc3RpY3MS"
    "HQoKYmF0Y2hfc2l6ZRgBIAEoBFIJYmF0Y2hTaXplEkEKDWNvbXB1dGVfaW5wdXQYAiABKAsyHC5pbmZlcmVuY2Uu"
    "U3RhdGlzdGljRHVyYXRpb25SDGNvbXB1dGVJbnB1dBJBCg1jb21wdXRlX2luZmVyGAMgASgLMhwuaW5mZXJlbmNl"
    "LlN0YXRpc3RpY0R1cmF0aW9uUgxjb21wdXRlSW5mZXISQwoOY29tcHV0ZV9vdXRwdXQYBCABKAsyHC5pbmZlcmVu"
    "Y2UuU3RhdGlzdGljRHVyYXRpb25SDWNvbXB1dGVPdXRwdXQivwIKD01vZGVsU3RhdGlzdGljcxISCgRuYW1lGAEg"
    "ASgJUgRuYW1lEhgKB3ZlcnNpb24YAiABKAlSB3ZlcnNpb24SJQoObGFzdF9pbmZlcmVuY2UYAyABKARSDWxhc3RJ"
    "bmZlcmVuY2USJwoPaW5mZXJlbmNlX2NvdW50GAQgASgEUg5pbmZlcmVuY2VDb3VudBInCg9leGVjdXRpb25fY291"
    "bnQYBSABKARSDmV4ZWN1dGlvbkNvdW50EkMKD2luZmVyZW5jZV9zdGF0cxgGIAEoCzIaLmluZmVyZW5jZS5JbmZl"
    "clN0YXRpc3RpY3NSDmluZmVyZW5jZVN0YXRzEkAKC2JhdGNoX3N0YXRzGAcgAygLMh8uaW5mZXJlbmNlLkluZmVy"
    "QmF0Y2hTdGF0aXN0aWNzUgpiYXRjaFN0YXRzIlYKF01vZGVsU3RhdGlzdGljc1Jlc3BvbnNlEjsKC21vZGVsX3N0"
    "YXRzGAEgAygLMhouaW5mZXJlbmNlLk1vZGVsU3RhdGlzdGljc1IKbW9kZWxTdGF0cyK6AQoYTW9kZWxSZXBvc2l0"
    "b3J5UGFyYW1ldGVyEh8KCmJvb2xfcGFyYW0YASABKAhIAFIJYm9vbFBhcmFtEiEKC2ludDY0X3BhcmFtGAIgASgD"
    "SABSCmludDY0UGFyYW0SIwoMc3RyaW5nX3BhcmFtGAMgASgJSABSC3N0cmluZ1BhcmFtEiEKC2J5dGVzX3BhcmFt"
    "GAQgASgMSABSCmJ5dGVzUGFyYW1CEgoQcGFyYW1ldGVyX2Nob2ljZSJXChZSZXBvc2l0b3J5SW5kZXhSZXF1ZXN0"
    "EicKD3JlcG9zaXRvcnlfbmFtZRgBIAEoCVIOcmVwb3NpdG9yeU5hbWUSFAoFcmVhZHkYAiABKAhSBXJlYWR5IsoB"
    "ChdSZXBvc2l0b3J5SW5kZXhSZXNwb25zZRJFCgZtb2RlbHMYASADKAsyLS5pbmZlcmVuY2UuUmVwb3NpdG9yeUlu"
    "ZGV4UmVzcG9uc2UuTW9kZWxJbmRleFIGbW9kZWxzGmgKCk1vZGVsSW5kZXgSEgoEbmFtZRgBIAEoCVIEbmFtZRIY"
    "Cgd2ZXJzaW9uGAIgASgJUgd2ZXJzaW9uEhQKBXN0YXRlGAMgASgJUgVzdGF0ZRIWCgZyZWFzb24YBCABKAlSBnJl"
    "YXNvbiKfAgoaUmVwb3NpdG9yeU1vZGVsTG9hZFJlcXVlc3QSJwoPcmVwb3NpdG9yeV9uYW1lGAEgASgJUg5yZXBv"
    "c2l0b3J5TmFtZRIdCgptb2RlbF9uYW1lGAIgASgJUgltb2RlbE5hbWUSVQoKcGFyYW1ldGVycxgDIAMoCzI1Lmlu"
    "ZmVyZW5jZS5SZXBvc2l0b3J5TW9kZWxMb2FkUmVxdWVzdC5QYXJhbWV0ZXJzRW50cnlSCnBhcmFtZXRlcnMaYgoP"
    "UGFyYW1ldGVyc0VudHJ5EhAKA2tleRgBIAEoCVIDa2V5EjkKBXZhbHVlGAIgASgLMiMuaW5mZXJlbmNlLk1vZGVs"
    "UmVwb3NpdG9yeVBhcmFtZXRlclIFdmFsdWU6AjgBIh0KG1JlcG9zaXRvcnlNb2RlbExvYWRSZXNwb25zZSKjAgoc"
    "UmVwb3NpdG9yeU1vZGVsVW5sb2FkUmVxdWVzdBInCg9yZXBvc2l0b3J5X25hbWUYASABKAlSDnJlcG9zaXRvcnlO"
    "YW1lEh0KCm1vZGVsX25hbWUYAiABKAlSCW1vZGVsTmFtZRJXCgpwYXJhbWV0ZXJzGAMgAygLMjcuaW5mZXJlbmNl"
    "LlJlcG9zaXRvcnlNb2RlbFVubG9hZFJlcXVlc3QuUGFyYW1ldGVyc0VudHJ5UgpwYXJhbWV0ZXJzGmIKD1BhcmFt"
    "ZXRlcnNFbnRyeRIQCgNrZXkYASABKAlSA2tleRI5CgV2YWx1ZRgCIAEoCzIjLmluZmVyZW5jZS5Nb2RlbFJlcG9z"
    "aXRvcnlQYXJhbWV0ZXJSBXZhbHVlOgI4ASIfCh1SZXBvc2l0b3J5TW9kZWxVbmxvYWRSZXNwb25zZSr6AQoIRGF0"
    "YVR5cGUSEAoMVFlQRV9JTlZBTElEEAASDQoJVFlQRV9CT09MEAESDgoKVFlQRV9VSU5UOBACEg8KC1RZUEVfVUlO"
    "VDE2EAMSDwoLVFlQRV9VSU5UMzIQBBIPCgtUWVBFX1VJTlQ2NBAFEg0KCVRZUEVfSU5UOBAGEg4KClRZUEVfSU5U"
    "MTYQBxIOCgpUWVBFX0lOVDMyEAgSDgoKVFlQRV9JTlQ2NBAJEg0KCVRZUEVfRlAxNhAKEg0KCVRZUEVfRlAzMhAL"
    "Eg0KCVRZUEVfRlA2NBAMEg8KC1RZUEVfU1RSSU5HEA0SDQoJVFlQRV9CRjE2EA4ytwgKFEdSUENJbmZlcmVuY2VT"
    "ZXJ2aWNlEksKClNlcnZlckxpdmUSHC5pbmZlcmVuY2UuU2VydmVyTGl2ZVJlcXVlc3QaHS5pbmZlcmVuY2UuU2Vy"
    "dmVyTGl2ZVJlc3BvbnNlIgASTgoLU2VydmVyUmVhZHkSHS5pbmZlcmVuY2UuU2VydmVyUmVhZHlSZXF1ZXN0Gh4u"
    "aW5mZXJlbmNlLlNlcnZlclJlYWR5UmVzcG9uc2UiABJLCgpNb2RlbFJlYWR5EhwuaW5mZXJlbmNlLk1vZGVsUmVh"
    "ZHlSZXF1ZXN0Gh0uaW5mZXJlbmNlLk1vZGVsUmVhZHlSZXNwb25zZSIAElcKDlNlcnZlck1ldGFkYXRhEiAuaW5m"
    "ZXJlbmNlLlNlcnZlck1ldGFkYXRhUmVxdWVzdBohLmluZmVyZW5jZS5TZXJ2ZXJNZXRhZGF0YVJlc3BvbnNlIgAS"
    "VAoNTW9kZWxNZXRhZGF0YRIfLmluZmVyZW5jZS5Nb2RlbE1ldGFkYXRhUmVxdWVzdBogLmluZmVyZW5jZS5Nb2Rl"
    "bE1ldGFkYXRhUmVzcG9uc2UiABJLCgpNb2RlbEluZmVyEhwuaW5mZXJlbmNlLk1vZGVsSW5mZXJSZXF1ZXN0Gh0u"
    "aW5mZXJlbmNlLk1vZGVsSW5mZXJSZXNwb25zZSIAElsKEE1vZGVsU3RyZWFtSW5mZXISHC5pbmZlcmVuY2UuTW9k"
    "ZWxJbmZlclJlcXVlc3QaIy5pbmZlcmVuY2UuTW9kZWxTdHJlYW1JbmZlclJlc3BvbnNlIgAoATABEk4KC01vZGVs"
    "Q29uZmlnEh0uaW5mZXJlbmNlLk1vZGVsQ29uZmlnUmVxdWVzdBoeLmluZmVyZW5jZS5Nb2RlbENvbmZpZ1Jlc3Bv"
    "bnNlIgASWgoPTW9kZWxTdGF0aXN0aWNzEiEuaW5mZXJlbmNlLk1vZGVsU3RhdGlzdGljc1JlcXVlc3QaIi5pbmZl"
    "cmVuY2UuTW9kZWxTdGF0aXN0aWNzUmVzcG9uc2UiABJaCg9SZXBvc2l0b3J5SW5kZXgSIS5pbmZlcmVuY2UuUmVw"
    "b3NpdG9yeUluZGV4UmVxdWVzdBoiLmluZmVyZW5jZS5SZXBvc2l0b3J5SW5kZXhSZXNwb25zZSIAEmYKE1JlcG9z"
    "aXRvcnlNb2RlbExvYWQSJS5pbmZlcmVuY2UuUmVwb3NpdG9yeU1vZGVsTG9hZFJlcXVlc3QaJi5pbmZlcmVuY2Uu"
    "UmVwb3NpdG9yeU1vZGVsTG9hZFJlc3BvbnNlIgASbAoVUmVwb3NpdG9yeU1vZGVsVW5sb2FkEicuaW5mZXJlbmNl"
    "LlJlcG9zaXRvcnlNb2RlbFVubG9hZFJlcXVlc3QaKC5pbmZlcmVuY2UuUmVwb3NpdG9yeU1vZGVsVW5sb2FkUmVz"
    "cG9uc2UiAGIGcHJvdG8z"
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
