"""Options that take no value, per command, read from the installed tools' `--help`.

Each entry is `(short flags, long flags)`: the short ones as one string of letters,
the long ones as space-separated names. Long options whose value is optional
(`--color[=WHEN]`) are listed here too: written bare they take nothing. Options that
take a required value, and forbidden ones, live in `_policies`; an option in neither
place is refused. Sources: GNU grep 3.8, sed 4.9, coreutils 9.1, diffutils 3.8,
file 5.44, util-linux 2.38 (rev). `tests/test_terminal_options.py` asks each binary
whether every name here is one of its options and whether it takes a value.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FLAGS"]

_CHECKSUM = ("btz", "binary tag text zero help version")

FLAGS: Mapping[str, tuple[str, str]] = {
    "grep": (
        "EFGPiwxzsvVbnHhoqaILlcTZUr",
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
        "word-regexp line-regexp null-data no-messages invert-match version help byte-offset "
        "line-number line-buffered with-filename no-filename only-matching quiet silent text "
        "recursive files-without-match files-with-matches count initial-tab null binary "
        "no-group-separator color colour",
    ),
    "sed": (
        "nrEsuz",
        "quiet silent debug posix regexp-extended separate sandbox unbuffered null-data "
        "help version",
    ),
    "awk": ("", ""),
    # find is checked by its own expression parser (`_checks`).
    "find": ("", ""),
    "ls": (
        "aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1",
        "all almost-all author escape ignore-backups directory dired classify file-type "
        "full-time no-group group-directories-first human-readable si "
        "dereference-command-line dereference-command-line-symlink-to-dir hyperlink inode "
        "kibibytes literal numeric-uid-gid hide-control-chars show-control-chars quote-name "
        "recursive reverse size context zero color help version",
    ),
    "cat": (
        "AbeEnstTuv",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting "
        "help version",
    ),
    "head": ("qvz", "quiet silent verbose zero-terminated help version"),
    "tail": ("qvz", "quiet silent verbose zero-terminated help version"),
    "wc": ("cmlLw", "bytes chars lines max-line-length words help version"),
    "sort": (
        "bdfgiMhnRrVcCmsuz",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse "
        "version-sort check merge stable unique zero-terminated debug help version",
    ),
    "uniq": (
        "cdDiuz",
        "count repeated all-repeated group ignore-case unique zero-terminated help version",
    ),
    "cut": ("nsz", "complement only-delimited zero-terminated help version"),
    "tr": ("cCdst", "complement delete squeeze-repeats truncate-set1 help version"),
    "file": (
        "vbcikLlhnN0rsd",
        "help version brief checking-printout mime apple extension mime-type mime-encoding "
        "keep-going list dereference no-dereference no-buffer no-pad print0 raw "
        "special-files debug",
    ),
    "stat": ("Lft", "dereference file-system terse help version"),
    "du": (
        "0abcDHhklmPSsx",
        "null all apparent-size bytes total dereference-args human-readable inodes "
        "count-links no-dereference separate-dirs si summarize one-file-system time "
        "help version",
    ),
    "echo": ("", ""),
    # nl takes no long option here (`no_long`); -p is --no-renumber.
    "nl": ("p", ""),
    "tac": ("br", "before regex help version"),
    "rev": ("hV", "help version"),
    "fold": ("bs", "bytes spaces help version"),
    "paste": ("sz", "serial zero-terminated help version"),
    "comm": ("123z", "check-order nocheck-order total zero-terminated help version"),
    "diff": (
        "qscuevnyptTNirEZbwBda",
        "normal brief report-identical-files context unified ed rcs side-by-side "
        "left-column suppress-common-lines show-c-function expand-tabs initial-tab "
        "suppress-blank-empty new-file unidirectional-new-file ignore-case "
        "ignore-file-name-case no-ignore-file-name-case recursive no-dereference "
        "ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space "
        "ignore-blank-lines strip-trailing-cr text minimal speed-large-files color "
        "help version",
    ),
    "cmp": ("blsv", "print-bytes quiet silent verbose help version"),
    "od": ("abcdfilosxvw", "strings output-duplicates width traditional help version"),
    "md5sum": _CHECKSUM,
    "sha256sum": _CHECKSUM,
    "basename": ("az", "multiple zero help version"),
    "dirname": ("z", "zero help version"),
    "realpath": (
        "emLPqsz",
        "canonicalize-existing canonicalize-missing logical physical quiet "
        "strip no-symlinks zero help version",
    ),
}
