"""`gligabao eval`: runs a suite of remembers and questions against a running API, judges every
answer, and writes a report with every trajectory (suite.py, runner.py, report.py); `gligabao eval
convert` turns the public LoCoMo and LongMemEval files into suites (adapters/).

Never imported by the service: it talks to the API over HTTP, as any client does.
"""
