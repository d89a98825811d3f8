//! The differential test across optimisation levels: C programs of the kind kvsp ships (an
//! interpreter, a parser, edit distance, cellular automata, a prime sieve, struct-heavy code,
//! sorting, hashing, 32- and 64-bit arithmetic) compiled by vsp-cc at -O0, -O1, -O2, -O3, -Os and
//! -Oz, run on the vsp-cahp ISA simulator, and compared with the same source built for the host
//! (`tests/c/prelude.h` gives both the same fixed-width types).

mod common;
use common::{differential_levels, require_clang, LARGE, LEVELS};

macro_rules! diff {
    ($name:ident, $file:literal, $args:expr) => {
        #[test]
        #[ignore = "needs clang"]
        fn $name() {
            require_clang();
            differential_levels(include_str!($file), $args, &LEVELS, LARGE);
        }
    };
}

const NUMS: &[&[&str]] = &[
    &["1234", "-77"],
    &["-30000", "123"],
    &["7", "7"],
    &["0", "1"],
];

diff!(
    interpreter,
    "c/diff/interp.c",
    &[&["10", "3"], &["60", "-29"], &["1", "30000"]]
);
diff!(
    expression_parser,
    "c/diff/parser.c",
    &[
        &["3+4*(2-1)"],
        &["-(12 - 5*7) % 4 + 100/7"],
        &["2*(3"],
        &["1+"],
        &["32767+2"]
    ]
);
diff!(
    edit_distance,
    "c/diff/editdist.c",
    &[
        &["kitten", "sitting"],
        &["", "abc"],
        &["flaw", "lawn"],
        &["intention", "execution"]
    ]
);
diff!(
    game_of_life,
    "c/diff/life.c",
    &[&["1", "5"], &["777", "15"], &["42", "0"]]
);
diff!(
    rule110,
    "c/diff/rule110.c",
    &[&["110", "20"], &["30", "31"], &["90", "7"]]
);
diff!(
    prime_sieve,
    "c/diff/sieve.c",
    &[&["100"], &["1000"], &["2"], &["-5"]]
);
diff!(structs, "c/diff/structs.c", NUMS);
diff!(long_long, "c/diff/longlong.c", NUMS);
diff!(
    long_long_recurrences,
    "c/diff/fact64.c",
    &[&["89", "27"], &["13", "-3"], &["0", "1"]]
);
diff!(long_long_mixed, "c/diff/mixed64.c", NUMS);
diff!(
    quicksort,
    "c/diff/qsort.c",
    &[&["1", "39"], &["4242", "17"], &["9", "1"], &["3", "0"]]
);
diff!(
    string_hashes,
    "c/diff/hash.c",
    &[&["hello", "world"], &["x"], &["The quick", "brown", "fox"]]
);
diff!(
    matrix_power,
    "c/diff/matrix.c",
    &[&["5", "11"], &["-33", "7"], &["1", "0"]]
);
diff!(number_theory, "c/diff/gcd.c", NUMS);
diff!(bit_tricks, "c/diff/bits.c", NUMS);
diff!(
    maze_bfs,
    "c/diff/maze.c",
    &[&["1", "0"], &["5", "1"], &["4", "0"], &["99", "2"]]
);
diff!(crc, "c/diff/crc.c", &[&["123456789"], &["a", "bc"], &[""]]);
diff!(
    tokenizer,
    "c/diff/tokens.c",
    &[&["x = 12 + y3*40;"], &["a1,b2 99 - #"], &["7"]]
);
diff!(
    unaligned_accesses,
    "c/diff/unaligned.c",
    &[
        &["1234", "-77"],
        &["abc", "9"],
        &["-30000", "123"],
        &["777", "7"]
    ]
);
diff!(
    static_data_past_byte_511,
    "c/diff/bigdata.c",
    &[&["1234", "3"], &["-77", "6"], &["0", "0"], &["699", "7"]]
);
