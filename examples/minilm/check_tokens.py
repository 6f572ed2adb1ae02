#!/usr/bin/env python3
"""check_tokens.py: the example's token ids against Hugging Face tokenizers' (the package's
tokenizer.json) on random strings drawn across Unicode blocks: ASCII, Latin with accents, Greek,
Cyrillic, CJK ideographs and kana, Hangul, combining marks, punctuation, symbols and emoji,
whitespace and control characters, words over 100 characters, and any code point whose general
category is the same in Unicode 3.2 and in this Python's Unicode (unicodedata.ucd_3_2_0).

  check_tokens.py MINILM_BINARY [--count N] [--seed S]
Exits 1 and prints the first differences when any sentence's ids differ.
  check_tokens.py MINILM_BINARY --scan
Tokenizes "ab<c>cd" for every code point c of the first three planes and lists where the ids
differ, with the character's category now and in Unicode 3.2. (2026-12-04, Python 3.11's Unicode
14.0, tokenizers 0.23.3: 759 code points in 107 runs, every one assigned or re-categorized since
Unicode 3.2 -- the character tables of Hugging Face's Rust crates are older than Python's.)
"""
import argparse
import pathlib
import random
import subprocess
import sys
import tempfile
import unicodedata

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_golden  # noqa: E402
import minilm_weights  # noqa: E402

POOLS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 3,
    "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝßĀāĂăĄąĆćČčĎďĒēĘęĚěĞğĪīİıŁłŃńŇňŌōŐőŒœŘřŚśŠšŢţŤťŪūŮůŰűŸŹźŻżŽžǍǎǏǐ",
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩάέήίόύώΆΈΉΊΌΎΏϊϋΐΰ",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯіїєґ",
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年東京日本語学習機械自然言語処理",
    "あいうえおかがきぎくぐけげこごさざしじすずせぜそぞただちぢつづてでとどアイウエオガギグゲゴパピプペポ",
    "가나다라마바사아자차카타파하한국어",
    "\u0300\u0301\u0302\u0303\u0308\u030a\u0327\u0328\u3099\u309a",
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»§¶·–—‘’“”„…‰′″‹›※。、「」『』（）！？：；",
    "™©®€£¥¢°±×÷µ¼½¾😀🚀👍🏽❤️✓★☆♪∞≈≠≤≥→←↑↓",
    "    \t\t\n\u00a0\u2002\u2003\u2009\u200a\u202f\u205f\u3000",
    "\u0000\u0007\u001b\u007f\u0085\u200b\u200c\u200d\u200e\ufeff\ufffd\u00ad\u2060",
]


def stable(cp):
    """The code point's category is the same in Unicode 3.2 and now: both sides classify it alike."""
    return unicodedata.ucd_3_2_0.category(chr(cp)) == unicodedata.category(chr(cp))


def random_code_point(rng):
    while True:
        cp = rng.choice([rng.randint(0x80, 0xD7FF), rng.randint(0xE000, 0x2FFFF)])
        if stable(cp):
            return chr(cp)


def random_sentence(rng):
    parts = []
    for _ in range(rng.randint(1, 12)):
        if rng.random() < 0.03:
            parts.append(rng.choice("abcdefgh") * rng.randint(95, 130))  # around the 100-character limit
            continue
        if rng.random() < 0.1:  # any code point of the first three planes but the surrogates
            parts.append("".join(random_code_point(rng) for _ in range(rng.randint(1, 6))))
            continue
        pool = rng.choice(POOLS)
        parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 10))))
        parts.append(rng.choice([" ", " ", " ", "", "\t"]))
    return "".join(parts).replace("\n", " ").replace("\r", " ")


def example_ids(binary, model_dir, sentences):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("\n".join(sentences) + "\n")
        path = f.name
    try:
        out = subprocess.run([binary, "--model", str(model_dir), "--tokens", path], check=True,
                             capture_output=True, text=True).stdout
    finally:
        pathlib.Path(path).unlink()
    return [[int(t) for t in line.split()] for line in out.splitlines()]


def scan(binary, model_dir):
    """Every code point alone between letters; prints the runs where the ids differ."""
    line_breaks = {0x85, 0x2028, 0x2029}  # would split the example's input lines
    cps = [cp for cp in range(0x80, 0x30000) if not 0xD800 <= cp <= 0xDFFF and cp not in line_breaks]
    sentences = ["ab" + chr(cp) + "cd" for cp in cps]
    want = make_golden.token_ids(model_dir, sentences, minilm_weights.max_seq_length(model_dir))
    got = example_ids(binary, model_dir, sentences)
    runs = []
    for cp, g, w in zip(cps, got, want):
        if g != w:
            if runs and runs[-1][1] == cp - 1:
                runs[-1][1] = cp
            else:
                runs.append([cp, cp])
    for first, last in runs:
        c = chr(first)
        print(f"U+{first:04X}..U+{last:04X} {unicodedata.category(c)} (3.2: {unicodedata.ucd_3_2_0.category(c)}) "
              f"{unicodedata.name(c, '?')}")
    count = sum(last - first + 1 for first, last in runs)
    unstable = sum(1 for first, last in runs for cp in range(first, last + 1) if not stable(cp))
    print(f"scan: {count} of {len(cps)} code points differ in {len(runs)} runs; {unstable} of them changed "
          f"category since Unicode 3.2 (Python's Unicode {unicodedata.unidata_version})")
    return 0 if unstable == count else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--scan", action="store_true", help="every code point, not random sentences")
    args = parser.parse_args()
    model_dir = minilm_weights.model_dir()
    if args.scan:
        return scan(args.binary, model_dir)
    rng = random.Random(args.seed)
    sentences = [random_sentence(rng) for _ in range(args.count)]
    want = make_golden.token_ids(model_dir, sentences, minilm_weights.max_seq_length(model_dir))
    got = example_ids(args.binary, model_dir, sentences)
    bad = [i for i in range(len(sentences)) if i >= len(got) or got[i] != want[i]]
    for i in bad[:5]:
        print(f"sentence {i} differs: {sentences[i]!r}\n  got  {got[i] if i < len(got) else None}\n  want {want[i]}")
    print(f"tokens: {len(sentences) - len(bad)} of {len(sentences)} random sentences equal to tokenizers' ids")
    return 1 if bad or len(got) != len(sentences) else 0


if __name__ == "__main__":
    sys.exit(main())
