# The status quo as-edit replaces, re-implemented for benchmarking: the inline
# python3 edit script a Java host pipes through `sh -c "python3 - ARGS <<'DELIM'"`.
# argv: PATH OLD_B64 NEW_B64 true|false. Semantics: decode, strict UTF-8,
# CRLF/CR -> LF in content, old and new, count, exact-once unless replace-all,
# realpath, a uuid-named temp beside the target, copy the mode, os.replace,
# print __RESULT__ + json.dumps.
import base64
import json
import os
import sys
import uuid


def result(obj, code):
    print("__RESULT__" + json.dumps(obj))
    sys.exit(code)


def norm(s):
    return s.replace("\r\n", "\n").replace("\r", "\n")


def main():
    path, old_b64, new_b64 = sys.argv[1:4]
    replace_all = len(sys.argv) > 4 and sys.argv[4] == "true"
    old = norm(base64.b64decode(old_b64).decode("utf-8"))
    new = norm(base64.b64decode(new_b64).decode("utf-8"))
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        result({"error": "file_not_found"}, 1)
    try:
        with open(real, "rb") as f:
            content = f.read().decode("utf-8")
    except Exception as e:
        result({"error": "read_failed", "detail": str(e)}, 1)
    if not content:
        result({"error": "empty"}, 1)
    content = norm(content)
    count = content.count(old)
    if count == 0:
        result({"error": "string_not_found"}, 1)
    if count > 1 and not replace_all:
        result({"error": "multiple_occurrences", "count": count}, 1)
    out = content.replace(old, new) if replace_all else content.replace(old, new, 1)
    tmp = None
    try:
        st = os.stat(real)
        tmp = os.path.join(os.path.dirname(real), ".%s.tmp-%s" % (os.path.basename(real), uuid.uuid4().hex))
        with open(tmp, "wb") as f:
            f.write(out.encode("utf-8"))
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, real)
    except Exception as e:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        result({"error": "write_failed", "detail": str(e)}, 1)
    result({"count": count}, 0)


main()
