//! The `--stdin` request's fast path against serde: whatever `parse_fast`
//! accepts, serde reads to the same request (or the same refusal), and
//! whatever it does not accept it hands back byte for byte.
#![no_main]

use as_edit::args::{parse_fast, parse_single};
use as_edit::request::EditOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let o = EditOptions::default();
    match parse_fast(data.to_vec(), &o) {
        Ok(fast) => assert_eq!(parse_single(data, &o), Some(fast)),
        Err(back) => assert_eq!(back, data),
    }
});
