"""x86_isa.py: the instruction-set extensions an x86 instruction needs, from objdump's AT&T text.

A table of mnemonics and register classes, written from the Intel SDM and AMD APM instruction
lists, for the extensions that tell attnc's x86 variants apart: SSE3 to SSE4.2, AVX, AVX2, FMA,
F16C, BMI, LZCNT, MOVBE, the AVX-512 subsets, AVX-VNNI, AMX, and the AMD-only SSE4a, XOP, FMA4
and TBM. Anything it does not name counts as baseline x86-64; names are those the runtime reads
from cpuid (runtime/src/cpu_features.cpp).
"""
import re

EXACT = {
    # AMD only
    "sse4a": "extrq insertq movntss movntsd",
    "tbm": "blcfill blci blcic blcmsk blcs blsfill blsic t1mskc tzmsk",
    "xop": "vpperm vpcmov vpshlb vpshlw vpshld vpshlq vpshab vpshaw vpshad vpshaq vpermil2ps vpermil2pd",
    # AMX
    "amx-tile": "ldtilecfg sttilecfg tileloadd tileloaddt1 tilestored tilezero tilerelease",
    "amx-bf16": "tdpbf16ps",
    "amx-int8": "tdpbssd tdpbsud tdpbusd tdpbuud",
    "amx-fp16": "tdpfp16ps",
    # AVX-512 subsets
    "avx512bf16": "vcvtne2ps2bf16 vcvtneps2bf16 vcvtneps2bf16x vcvtneps2bf16y vdpbf16ps",
    "avx512vbmi": "vpermb vpermi2b vpermt2b vpmultishiftqb",
    "avx512vbmi2": "vpcompressb vpcompressw vpexpandb vpexpandw vpshldw vpshldd vpshldq vpshldvw vpshldvd "
                   "vpshldvq vpshrdw vpshrdd vpshrdq vpshrdvw vpshrdvd vpshrdvq",
    "avx512ifma": "vpmadd52luq vpmadd52huq",
    "avx512bitalg": "vpopcntb vpopcntw vpshufbitqmb",
    "avx512vpopcntdq": "vpopcntd vpopcntq",
    "avx512cd": "vpconflictd vpconflictq vplzcntd vplzcntq vpbroadcastmb2q vpbroadcastmw2d",
    "gfni": "gf2p8affineqb gf2p8affineinvqb gf2p8mulb vgf2p8affineqb vgf2p8affineinvqb vgf2p8mulb",
    # scalar extensions
    # tzcnt is not here: it is encoded as `rep bsf`, which CPUs without BMI run as bsf, and LLVM
    # emits it for them only where the two agree (a non-zero input).
    "bmi": "andn bextr blsi blsmsk blsr",
    "bmi2": "bzhi mulx pdep pext rorx sarx shlx shrx",
    "lzcnt": "lzcnt",
    "popcnt": "popcnt",
    "movbe": "movbe",
    "adx": "adcx adox",
    "f16c": "vcvtph2ps vcvtps2ph",
    # SSE levels
    "sse3": "haddps haddpd hsubps hsubpd addsubps addsubpd movddup movshdup movsldup lddqu fisttp fisttpl "
            "fisttpll fisttps",
    "ssse3": "pshufb phaddw phaddd phaddsw phsubw phsubd phsubsw pmaddubsw pmulhrsw palignr psignb psignw "
             "psignd pabsb pabsw pabsd",
    "sse41": "pblendvb blendvps blendvpd blendps blendpd pblendw pminsb pminsd pminuw pminud pmaxsb pmaxsd "
             "pmaxuw pmaxud pmulld pmuldq roundps roundpd roundss roundsd ptest pextrb pextrd pextrq pinsrb "
             "pinsrd pinsrq dpps dppd insertps extractps packusdw pcmpeqq phminposuw mpsadbw movntdqa",
    "sse42": "pcmpgtq pcmpestri pcmpestrm pcmpistri pcmpistrm crc32b crc32w crc32l crc32q",
    # AVX2 on any register width
    "avx2": "vperm2i128 vinserti128 vextracti128 vpbroadcastb vpbroadcastw vpbroadcastd vpbroadcastq vpermd "
            "vpermq vpermps vpermpd vpmaskmovd vpmaskmovq vpsllvd vpsllvq vpsrlvd vpsrlvq vpsravd vpblendd "
            "vgatherdps vgatherdpd vgatherqps vgatherqpd vpgatherdd vpgatherdq vpgatherqd vpgatherqq",
}
MNEMONIC = {m: feature for feature, names in EXACT.items() for m in names.split()}

PATTERNS = [
    # AVX-512 foundation (and DQ/BW) instructions with no VEX form
    (re.compile(r"^(vpternlog[dq]|valign[dq]|vpro[lr]v?[dq]|vscalef\w+|vgetexp\w+|vgetmant\w+|vrndscale\w+|"
                r"vfixupimm\w+|vrcp14\w+|vrsqrt14\w+|vcompressp[sd]|vpcompress[dq]|vexpandp[sd]|vpexpand[dq]|"
                r"vpcmpu?[bwdq]|vpmovu?s?(db|dw|qb|qw|qd|wb)|vpmov[bwdq]2m|vpmovm2[bwdq]|vcvtu\w+|"
                r"vcvtt?[ps][sd]2u\w+|vcvtt?p[sd]2u?qq|vcvtu?qq2p[sd]\w*|v(extract|insert)[fi](32x4|64x4|32x8|64x2)|"
                r"vshuf[fi](32x4|64x2)|vbroadcast[fi](32x[248]|64x[24])|vblendmp[sd]|vpblendm[bwdq]|"
                r"vptestn?m[bwdq]|vpabsq|vpm(ax|in)[su]q|vpsraq|vpsravq|vpmullq|vrange\w+|vreduce\w+|"
                r"vfpclass\w+|vperm[it]2(d|q|w|ps|pd)|vmovdqu(8|16|32|64)|vmovdqa(32|64)|"
                r"k(mov|and|andn|or|xor|xnor|not|shiftl|shiftr|ortest|test|unpck|add)[bwdq]?\w*)$"), "avx512f"),
    # AVX-512 FP16: half-precision arithmetic and conversions (F16C's vcvtph2ps / vcvtps2ph excepted)
    (re.compile(r"^v\w*(ph|sh)$|^vcvtt?ph2\w+$|^vcvt\w*2ph[xyz]?$|^vcvtt?sh2\w+$|^vmovw$"), "avx512fp16"),
    (re.compile(r"^vfn?m(add|sub|addsub|subadd)(132|213|231)[ps][sd]$"), "fma"),
    (re.compile(r"^vfn?m(add|sub|addsub|subadd)[ps][sd]$"), "fma4"),
    (re.compile(r"^(vprot[bwdq]|vpcom\w+|vfrcz\w+|vpmacs\w+|vpmadcs\w+|vphaddu?(bw|bd|bq|wd|wq|dq)|"
                r"vphsub(bw|wd|dq))$"), "xop"),
    (re.compile(r"^sha(1|256)\w+$"), "sha"),
]

PREFIXES = {"lock", "rep", "repz", "repe", "repnz", "repne", "notrack", "bnd", "data16", "addr32", "cs", "ds",
            "es", "fs", "gs", "ss", "rex", "rex.w", "{vex}", "{vex3}", "{evex}", "{load}", "{store}"}
WIDE_REGISTER = re.compile(r"%[xy]mm(1[6-9]|2\d|3[01])\b")
MASK_REGISTER = re.compile(r"%k[0-7]\b")


def split_line(text):
    """(mnemonic, operands, vex) of an objdump instruction text, prefixes dropped."""
    words = text.split()
    vex = False
    while words and (words[0] in PREFIXES or words[0].startswith("rex.")):
        vex = vex or words[0].startswith("{vex")
        words.pop(0)
    if not words:
        return "", "", vex
    return words[0], " ".join(words[1:]), vex


# features() of each (mnemonic, vex, operand classes) seen: a build's ten million instructions
# have a few thousand, and the patterns below cost most of the test's time when run per line.
_seen = {}


def features(text):
    """The set of extensions one instruction (objdump's text after the address) needs."""
    mnemonic, operands, vex = split_line(text)
    if not mnemonic:
        return frozenset()
    key = (mnemonic, vex, "%zmm" in operands, MASK_REGISTER.search(operands) is not None,
           WIDE_REGISTER.search(operands) is not None, "%ymm" in operands, operands.startswith("%xmm"))
    needs = _seen.get(key)
    if needs is None:
        needs = _seen[key] = frozenset(_features(mnemonic, operands, vex))
    return needs


def _features(mnemonic, operands, vex):
    """features() of a split line: reads the operands only through the classes in its cache key."""
    needs = set()
    if "%zmm" in operands or MASK_REGISTER.search(operands):
        needs.add("avx512f")
    if WIDE_REGISTER.search(operands):
        needs.update({"avx512f", "avx512vl"})
    feature = MNEMONIC.get(mnemonic)
    if feature is not None:
        needs.add(feature)
    if mnemonic in ("vpdpbusd", "vpdpbusds", "vpdpwssd", "vpdpwssds"):
        needs.add("avxvnni" if vex else "avx512vnni")
    for pattern, name in PATTERNS if feature is None else ():
        if pattern.match(mnemonic):
            needs.add(name)
            break
    if mnemonic.startswith(("aes", "vaes")):
        needs.add("vaes" if "%ymm" in operands or "%zmm" in operands else "aes")
    if mnemonic.startswith(("pclmul", "vpclmul")):
        needs.add("vpclmulqdq" if "%ymm" in operands or "%zmm" in operands else "pclmul")
    if mnemonic.startswith("v") and not needs & {"avx512f", "avx512fp16", "avx512bf16", "xop", "fma4"}:
        needs.add("avx")
        # VEX integer instructions on 256-bit registers are AVX2's.
        if mnemonic.startswith("vp") and "%ymm" in operands:
            needs.add("avx2")
        # vbroadcastss/sd from a register (AVX takes memory only).
        if mnemonic in ("vbroadcastss", "vbroadcastsd") and operands.startswith("%xmm"):
            needs.add("avx2")
    return needs
