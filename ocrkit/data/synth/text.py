"""Realistic line texts: Faker prose and fields, receipt vocabulary (vocabulary.py), numbers, and
Fraktur-era spelling.

Every string that reaches a label goes through `fit_text`, so labels only hold characters that the
chosen font draws and the charset allows.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from functools import lru_cache

import numpy as np
from faker import Faker

from ocrkit.data.synth.vocabulary import (
    DATE_FORMATS,
    FIELD_LABELS,
    ITEM_WORDS,
    MALAY_WORDS,
    RECEIPT_KEYS,
    RECEIPT_META_KEYS,
)

# Locales whose Faker word lists are real language (en_GB and pt_PT fall back to Latin lorem ipsum).
LOCALES = ("en_US", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL", "da_DK")
LOCALE_WEIGHTS = np.array([0.40, 0.20, 0.18, 0.06, 0.05, 0.04, 0.04, 0.03])

# Fallbacks for characters a font lacks: keep the meaning, never emit an undrawn glyph.
_FALLBACK = {
    "ſ": "s",
    "’": "'",
    "‘": "'",
    "‚": ",",
    "“": '"',
    "”": '"',
    "„": '"',
    "«": '"',
    "»": '"',
    "–": "-",
    "—": "-",
    "…": "...",
    "•": "*",
    "·": ".",
    "€": "EUR",
    "£": "GBP",
    "ß": "ss",
    "ẞ": "SS",
    "‹": "<",
    "›": ">",
    "′": "'",
    "″": '"',
    "№": "No",
    "ﬁ": "fi",
    "ﬂ": "fl",
    "™": "TM",
}


@lru_cache(maxsize=len(LOCALES))
def _faker(locale: str) -> Faker:
    """One Faker per locale and process (construction costs ~50 ms; re-seeded per item)."""
    return Faker(locale)


def fit_text(text: str, allowed: frozenset[str] | set[str]) -> str:
    """Map characters outside `allowed` to fallbacks (or their base letter), drop the rest, tidy spaces."""
    out = []
    for ch in text:
        if ch in allowed:
            out.append(ch)
            continue
        sub = _FALLBACK.get(ch)
        if sub is None:
            sub = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append("".join(c for c in sub if c in allowed))
    return re.sub(r"\s+", " ", "".join(out)).strip()


def long_s(text: str) -> str:
    """Fraktur-era spelling: medial and initial s as ſ, round s only at the end of a word or syllable."""
    return re.sub(r"s(?=[a-zäöüß])", "ſ", text)


def recase(text: str, mode: str, keep_acronyms: bool) -> str:
    """Receipt text in another case: "title" (Total Qty), "sentence" (Total qty) or "as is".

    Tokens with digits stay as they are; with keep_acronyms, all-capital words of up to 3 letters
    (GST, RM, NO) stay capitals, as real receipts print them in mixed-case lines."""
    if mode == "as is":
        return text
    words = []
    for i, word in enumerate(text.split(" ")):
        letters = "".join(c for c in word if c.isalpha())
        if (
            not letters
            or any(c.isdigit() for c in word)
            or (keep_acronyms and letters.isupper() and len(letters) <= 3)
        ):
            words.append(word)
            continue
        word = word.lower()
        if mode == "title" or i == 0:
            first = word.index(letters[0].lower())
            word = word[:first] + word[first].upper() + word[first + 1 :]
        words.append(word)
    return " ".join(words)


class TextGen:
    """Draws strings of many kinds for one page; deterministic given the rng."""

    def __init__(self, rng: np.random.Generator, locale: str | None = None) -> None:
        self.rng = rng
        self.locale = locale or str(rng.choice(LOCALES, p=LOCALE_WEIGHTS / LOCALE_WEIGHTS.sum()))
        self.fk = _faker(self.locale)
        self.fk.seed_instance(int(rng.integers(2**31)))

    # --- small helpers -------------------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, seq):  # noqa: ANN001, ANN201 - any sequence
        return seq[int(self.rng.integers(len(seq)))]

    # --- prose ---------------------------------------------------------------------------------------
    def sentence(self, lo: int = 4, hi: int = 14) -> str:
        s = self.fk.sentence(nb_words=int(self.rng.integers(lo, hi)))
        if self.chance(0.25):
            words = s.split()
            words.insert(int(self.rng.integers(len(words) + 1)), self.token())
            s = " ".join(words)
        return s

    def paragraph(self, lo: int = 2, hi: int = 7) -> str:
        return " ".join(self.sentence() for _ in range(int(self.rng.integers(lo, hi))))

    def heading(self) -> str:
        kind = self.rng.random()
        if kind < 0.4:
            s = self.fk.sentence(nb_words=int(self.rng.integers(2, 6))).rstrip(".")
        elif kind < 0.6:
            words = self.fk.sentence(nb_words=int(self.rng.integers(1, 5))).rstrip(".")
            s = f"{self.rng.integers(1, 20)}. {words}"
        elif kind < 0.8:
            s = self.fk.company()
        else:
            s = self.fk.catch_phrase() if self.locale.startswith("en") else self.fk.city()
        return s.upper() if self.chance(0.3) else s

    def words(self, lo: int = 1, hi: int = 4) -> str:
        return " ".join(self.fk.word() for _ in range(int(self.rng.integers(lo, hi))))

    # --- fields --------------------------------------------------------------------------------------
    def price(self, signed: bool = False) -> str:
        v = float(np.exp(self.rng.uniform(np.log(0.1), np.log(2000))))
        s = f"{v:,.2f}" if v >= 1000 and self.chance(0.5) else f"{v:.2f}"
        if self.locale[:2] in ("de", "fr", "es", "it", "nl", "pt", "pl", "da") and self.chance(0.6):
            s = s.replace(",", " ").replace(".", ",")
        if signed and self.chance(0.1):
            s = "-" + s
        r = self.rng.random()
        if r < 0.12:
            s = self.choice(("RM", "RM ", "$", "€", "£", "EUR ")) + s
        elif r < 0.18:
            s = s + self.choice((" €", " EUR", " SR", " ZR", " T", " *"))
        return s

    def moment(self) -> datetime.datetime:
        """A date-time drawn from this generator's RNG (Faker's are relative to *now*: not reproducible)."""
        seconds = int(self.rng.integers(0, 60 * 365 * 86400))
        return datetime.datetime(1966, 1, 1) + datetime.timedelta(seconds=seconds)

    def date(self) -> str:
        fmt = self.choice(DATE_FORMATS)
        return self.moment().strftime(fmt)

    def ident(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return "".join(self.choice("0123456789") for _ in range(int(self.rng.integers(6, 13))))
        if r < 0.6:
            letters = "".join(
                self.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(int(self.rng.integers(1, 4)))
            )
            return f"{letters}{self.rng.integers(10, 10**7)}"
        if r < 0.8:
            return self.fk.bothify(
                self.choice(("??-####-##", "####-???-###", "#####/##", "INV-######", "#########-X"))
            )
        return self.fk.iban() if self.chance(0.5) else self.fk.isbn13()

    def short_cell(self) -> str:
        """A 1-3 character cell (quantity, tax code, unit, mark): SROIE prints whole columns of them, and the
        detector found only two in three on its own synthetic pages (recall 0.665)."""
        r = self.rng.random()
        if r < 0.55:
            return str(int(self.rng.integers(1, 10 if self.chance(0.7) else 100)))
        if r < 0.85:
            return self.choice(("SR", "ZR", "S", "Z", "T", "E", "A", "B", "*", "%", "X", "N", "Y", "TX"))
        return self.choice(("EA", "PC", "PCS", "KG", "G", "L", "ML", "M", "BOX", "CTN", "UNT", "Stk"))

    def token(self) -> str:
        """A short non-prose token to sprinkle into sentences (numbers, dates, e-mails, codes)."""
        kind = int(self.rng.integers(9))
        return (
            self.price(),
            self.date(),
            self.ident(),
            self.fk.email(),
            self.fk.phone_number(),
            str(int(self.rng.integers(0, 10000))),
            f"{self.rng.uniform(0, 100):.1f}%",
            self.fk.url() if self.chance(0.5) else self.fk.postcode(),
            f"({self.fk.word()})",
        )[kind]

    def field_value(self) -> str:
        """A value as filled into a form or key/value list."""
        kind = int(self.rng.integers(8))
        return (
            self.fk.name(),
            self.fk.street_address(),
            self.fk.city(),
            self.date(),
            self.fk.phone_number(),
            self.fk.email(),
            self.ident(),
            self.price(),
        )[kind]

    def field_label(self) -> str:
        labels = FIELD_LABELS.get(self.locale[:2], FIELD_LABELS["en"])
        s = self.choice(labels)
        return s + ":" if self.chance(0.7) else s

    # --- receipts ------------------------------------------------------------------------------------
    def shop_name(self) -> str:
        if self.chance(0.5):
            name = " ".join(self.choice(MALAY_WORDS) for _ in range(int(self.rng.integers(1, 3))))
            name = f"{self.fk.last_name().upper()} {name}"
            return name + self.choice(
                ("", " SDN BHD", " SDN. BHD.", " ENTERPRISE", f" ({self.rng.integers(10**5, 10**6)}-X)")
            )
        return self.fk.company().upper() if self.chance(0.7) else self.fk.company()

    def item_name(self) -> str:
        words = [self.choice(ITEM_WORDS) for _ in range(int(self.rng.integers(1, 4)))]
        if self.chance(0.3):
            words = [self.fk.word().upper()] + words
        if self.chance(0.15):
            words.insert(0, str(self.rng.integers(1000, 99999)))
        s = " ".join(words)
        return s if self.chance(0.85) else s.title()

    def receipt_key(self) -> str:
        return self.choice(RECEIPT_KEYS) + (" :" if self.chance(0.2) else ":" if self.chance(0.3) else "")

    def receipt_header_line(self) -> str:
        kind = int(self.rng.integers(7))
        s = (
            self.fk.street_address(),
            f"{self.fk.postcode()} {self.fk.city()}",
            f"TEL: {self.fk.phone_number()}" if self.chance(0.5) else f"Tel {self.fk.phone_number()}",
            f"GST ID: {self.rng.integers(10**11, 10**12):012d}"
            if self.chance(0.6)
            else f"GST REG NO: {self.ident()}",
            f"CO. REG: {self.rng.integers(10**5, 10**7)}-{self.choice('ADHKPTUVWX')}",
            self.fk.email().upper() if self.chance(0.5) else self.fk.url(),
            f"{self.choice(MALAY_WORDS)} {self.rng.integers(1, 99)}, "
            f"{self.choice(MALAY_WORDS)} {self.choice(MALAY_WORDS)}",
        )[kind]
        return s.upper() if self.chance(0.7) else s

    def receipt_meta(self) -> tuple[str, str]:
        """A (key, value) pair such as invoice number, cashier, date."""
        k = self.choice(RECEIPT_META_KEYS)
        if k == "Date":
            v = self.date()
        elif k == "Time":
            v = self.moment().strftime(self.choice(("%H:%M", "%H:%M:%S", "%I:%M %p")))
        elif k in ("Cashier", "Served by", "Member"):
            v = self.fk.first_name().upper()
        else:
            v = self.ident()
        k = k.upper() if self.chance(0.5) else k
        return k + self.choice((":", " :", "", ".")), v
