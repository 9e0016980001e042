"""One line of summary.tsv from a pytest JUnit XML file: stem, passed,
failed, error, skipped (a file that did not run counts as one error).

    python junit_summary.py FILE.xml STEM >> summary.tsv
"""
import sys
import xml.etree.ElementTree as ET


def summarise(path, stem):
    try:
        root = ET.parse(path).getroot()
    except Exception:
        return f"{stem}\t0\t0\t1\t0"
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    p = f = e = s = 0
    for su in suites:
        for tc in su.iter("testcase"):
            kids = {c.tag for c in tc}
            if "skipped" in kids:
                s += 1
            elif "failure" in kids:
                f += 1
            elif "error" in kids:
                e += 1
            else:
                p += 1
    return f"{stem}\t{p}\t{f}\t{e}\t{s}"


if __name__ == "__main__":
    print(summarise(sys.argv[1], sys.argv[2]))
