#!/usr/bin/python3
"""junit_check.py FILE [--xsd XSD] - is FILE JUnit XML that the common
readers accept?  What the Jenkins xunit plugin's junit-10.xsd requires
(the strictest published schema; GitLab's reader and pytest's
--junitxml output keep within it), checked element by element:

  testsuites  attributes among name, time, tests, failures, errors;
              only testsuite children
  testsuite   name, tests, failures, errors required; the others among
              group, time, skipped, timestamp, hostname, id, package,
              file, log, url; children testsuite, properties, testcase,
              system-out, system-err
  testcase    name required; classname, time, group allowed; children
              skipped, error, failure, system-out, system-err
  failure, error, skipped   type and message only

and the counts agree with the testcases (tests, failures, errors).  With
--xsd (or $MW_JUNIT_XSD), `xmllint --schema XSD` must accept it too.
Prints one line; exits 1 with the first violation.
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SUITE_REQ = {"name", "tests", "failures", "errors"}
SUITE_OPT = {"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file",
             "log", "url"}
CASE_KIDS = {"skipped", "error", "failure", "system-out", "system-err"}


def bad(why):
    print("junit_check: %s" % why)
    sys.exit(1)


def attrs(el, req, opt):
    missing = req - set(el.attrib)
    if missing:
        bad("<%s> lacks %s" % (el.tag, sorted(missing)))
    extra = set(el.attrib) - req - opt
    if extra:
        bad("<%s> has %s, which the schema does not allow" % (el.tag, sorted(extra)))


def case(c):
    attrs(c, {"name"}, {"classname", "time", "group"})
    for k in c:
        if k.tag not in CASE_KIDS:
            bad("<testcase> holds <%s>" % k.tag)
        if k.tag in ("failure", "error", "skipped"):
            attrs(k, set(), {"type", "message"})
            if len(k):
                bad("<%s> holds elements" % k.tag)


def suite(s):
    attrs(s, SUITE_REQ, SUITE_OPT)
    cases = []
    for k in s:
        if k.tag == "testcase":
            case(k)
            cases.append(k)
        elif k.tag == "testsuite":
            cases += suite(k)
        elif k.tag not in ("properties", "system-out", "system-err"):
            bad("<testsuite> holds <%s>" % k.tag)
    counts(s, cases)
    return cases


def counts(el, cases):
    want = {"tests": len(cases),
            "failures": sum(c.find("failure") is not None for c in cases),
            "errors": sum(c.find("error") is not None for c in cases)}
    for k, v in want.items():
        if k in el.attrib and el.get(k) != str(v):
            bad("<%s %s=%r>, but %d testcases say so" % (el.tag, k, el.get(k), v))


def main():
    args = sys.argv[1:]
    xsd = os.environ.get("MW_JUNIT_XSD")
    if "--xsd" in args:
        i = args.index("--xsd")
        xsd = args[i + 1]
        del args[i:i + 2]
    path = args[0]
    root = ET.parse(path).getroot()
    if root.tag == "testsuites":
        attrs(root, set(), {"name", "time", "tests", "failures", "errors"})
        cases = []
        for s in root:
            if s.tag != "testsuite":
                bad("<testsuites> holds <%s>" % s.tag)
            cases += suite(s)
        counts(root, cases)
    elif root.tag == "testsuite":
        cases = suite(root)
    else:
        bad("the root is <%s>" % root.tag)
    if xsd:
        r = subprocess.run(["xmllint", "--noout", "--schema", xsd, path],
                           capture_output=True, text=True)
        if r.returncode:
            bad("xmllint --schema %s: %s" % (xsd, r.stderr.strip()))
    print("junit_check: %d testcases, as junit-10.xsd wants them%s" %
          (len(cases), " (and xmllint agrees)" if xsd else ""))


main()
