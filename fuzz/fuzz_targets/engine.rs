//! The streaming engine on arbitrary bytes, edits and chunkings: it must not
//! panic, and streaming must agree with the whole-buffer run.
#![no_main]

use as_edit::engine::{replace, Edit, Engine};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: [n_edits, chunk, len_old, len_new, all, old.., new.., ...] content
    if data.len() < 2 {
        return;
    }
    let n = (data[0] % 3) as usize + 1;
    let chunk = (data[1] as usize % 17) + 1;
    let mut rest = &data[2..];
    let mut edits = Vec::new();
    for _ in 0..n {
        if rest.len() < 3 {
            return;
        }
        let (lo, ln, all) = ((rest[0] % 8) as usize, (rest[1] % 8) as usize, rest[2] & 1 == 1);
        rest = &rest[3..];
        if rest.len() < lo + ln {
            return;
        }
        let (Ok(old), Ok(new)) = (std::str::from_utf8(&rest[..lo]), std::str::from_utf8(&rest[lo..lo + ln])) else {
            return;
        };
        let Ok(e) = Edit::new(old, new, all) else { return };
        edits.push(e);
        rest = &rest[lo + ln..];
    }
    let whole = replace(rest, &edits).map(|(b, s)| (b, s.count));
    let mut out = Vec::new();
    let mut engine = Engine::new(&edits, true);
    for c in rest.chunks(chunk) {
        engine.feed(c, &mut |b| out.extend_from_slice(b));
    }
    let streamed = engine.finish(&mut |b| out.extend_from_slice(b)).map(|s| (out, s.count));
    assert_eq!(whole, streamed);
});
