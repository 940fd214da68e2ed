"""`ocrkit finetune` stamps what it prints with the time and keeps it, standard error too, in a log file."""

import re
import sys

from ocrkit.finetune.log import stamped_output

STAMP = r"\d\d:\d\d:\d\d "


def test_lines_are_stamped_on_the_console_and_kept_in_the_log(tmp_path, capsys):
    log = tmp_path / "run" / "train.log"
    with stamped_output(log):
        print("import: 3 pages")
        sys.stdout.write("detector: step ")  # a line written in pieces is stamped once, whole
        sys.stdout.write("10: loss 1.5\nrecognizer: done")
        print("refused: page.png", file=sys.stderr)
    out, err = capsys.readouterr()
    assert re.fullmatch(
        rf"{STAMP}import: 3 pages\n{STAMP}detector: step 10: loss 1.5\n{STAMP}recognizer: done\n", out
    )
    assert err == "refused: page.png\n"  # errors keep their one-line form on the console
    kept = log.read_text().splitlines()
    assert [re.sub(STAMP, "", line, count=1) for line in kept] == [
        "import: 3 pages",
        "detector: step 10: loss 1.5",
        "refused: page.png",
        "recognizer: done",
    ]
    assert all(re.match(STAMP, line) for line in kept)
    assert sys.stdout is not None and not hasattr(sys.stdout, "pending")  # streams restored
