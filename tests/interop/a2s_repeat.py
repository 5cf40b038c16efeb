"""Asks an A2S server for its INFO COUNT times in a row with python-a2s (`a2s.info()`,
which asks for a fresh challenge each time) and prints one JSON object on stdout:
{"answered": n, "asked": COUNT, "errors": ["ExceptionName: message", ...]}.

Usage: python a2s_repeat.py PORT COUNT [TIMEOUT]
Used by crates/ogp-cli/tests/all/spoofed_victim.rs (the victim of a spoofer).
"""

import json
import sys

import a2s


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    answered, errors = 0, []
    for _ in range(count):
        try:
            a2s.info(("127.0.0.1", port), timeout=timeout)
            answered += 1
        except Exception as e:  # a timeout or a broken reply: counted, not raised
            errors.append(f"{type(e).__name__}: {e}")
    print(json.dumps({"answered": answered, "asked": count, "errors": errors}))


main()
