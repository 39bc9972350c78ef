#!/usr/bin/env python3
"""Sets one int64 key (or one item of a float64 array key) of a Seer container (.ckpt or .seer) and
rewrites its header checksum, so the file passes the CRC check with a forged value:
tests/test_hostile.sh uses it to show that values are checked for plausibility, not only for
corruption.

  ckpt_edit.py FILE KEY VALUE            an int64 key
  ckpt_edit.py FILE KEY VALUE INDEX      item INDEX of a float64 array key
  ckpt_edit.py FILE --rename KEY NEW     renames a key (NEW as long as KEY): the file as a writer
                                         that never knew KEY would have written it
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import seer_container  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[2] == "--rename":
        seer_container.rename_key(sys.argv[1], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5:
        seer_container.set_f64_item(sys.argv[1], sys.argv[2], int(sys.argv[4]), float(sys.argv[3]))
    else:
        seer_container.set_i64(sys.argv[1], sys.argv[2], int(sys.argv[3]))
