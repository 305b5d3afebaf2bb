//! An answer of `max_bytes` is held once (peak RSS): the heap's
//! peak while a `read` or a `grep` answers a page of 8 MiB stays within
//! `max_bytes` and a little (a read chunk, a grep block), counted by a
//! global allocator that adds up the bytes held — deterministic, unlike
//! RSS. Before, a text read held its text and the escaped line (16 MiB),
//! and a `content` grep its lines, their groups rendered and the page.
//!
//! One test in this binary: the allocator's counts are process-wide.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = HELD.fetch_add(n, SeqCst) + n;
    PEAK.fetch_max(now, SeqCst);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        HELD.fetch_sub(l.size(), SeqCst);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            // Counted as held at once, as a copying realloc holds both.
            grew(new);
            HELD.fetch_sub(l.size(), SeqCst);
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

const MAX: usize = 8 << 20;

/// The result line of `request` and the heap's peak above what was held
/// before it, the line itself included.
fn answer(request: &str) -> (String, usize) {
    let args = [std::ffi::OsString::from("--stdin")];
    let base = HELD.load(SeqCst);
    PEAK.store(base, SeqCst);
    let r = as_edit::run(&args, None, &mut request.as_bytes());
    let peak = PEAK.load(SeqCst) - base;
    (r.stdout, peak)
}

#[test]
fn an_8_mib_page_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.txt");
    {
        // 20 MB of lines, every one holding the needle.
        let mut w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
        for i in 0..250_000 {
            writeln!(
                w,
                "{i:>8} let needle = \"value\"; // a line of about eighty bytes"
            )
            .unwrap();
        }
    }
    let p = f.to_str().unwrap();
    let cases = [
        format!(r#"{{"op":"read","path":"{p}","max_bytes":{MAX}}}"#),
        format!(r#"{{"op":"read","path":"{p}","raw":true,"max_bytes":{MAX}}}"#),
        format!(
            r#"{{"op":"grep","pattern":"needle","path":"{p}","output":"content","limit":100000,"max_bytes":{MAX}}}"#
        ),
    ];
    let mut over = Vec::new();
    for req in &cases {
        let (line, peak) = answer(req);
        eprintln!("{req}: line {} bytes, heap peak {peak}", line.len());
        assert!(
            line.contains("\"truncated\":true"),
            "{req}: {}",
            line.get(..300).unwrap_or(&line)
        );
        // A full page: within the bound, and most of it.
        assert!(
            line.len() <= MAX && line.len() > MAX - 4096,
            "{req}: {}",
            line.len()
        );
        // The page once, and a read chunk or a grep block besides.
        if peak > MAX + (1 << 20) {
            over.push(format!("{req}: peak {peak} for {}", line.len()));
        }
    }
    assert!(over.is_empty(), "{over:#?}");
}
