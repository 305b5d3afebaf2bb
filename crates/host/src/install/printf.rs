//! The printf encoding: bytes as the inside of single-quoted printf
//! formats (a shell builtin), printable ASCII raw, the rest as short octal
//! escapes.

use std::io::Write as _;

/// `bytes` as the inside of a single-quoted printf format that prints them.
pub(super) fn printf_format(bytes: &[u8], out: &mut Vec<u8>) {
    for (i, &b) in bytes.iter().enumerate() {
        printf_piece(b, bytes.get(i + 1).copied(), i == 0, out);
    }
}

/// Splits `bytes` into printf formats of at most `room` characters each.
pub(super) fn printf_chunks(bytes: &[u8], room: usize) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut chunk = Vec::with_capacity(room);
    let mut piece = Vec::with_capacity(4);
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        piece.clear();
        printf_piece(b, next, chunk.is_empty(), &mut piece);
        if chunk.len() + piece.len() > room {
            chunks.push(std::mem::replace(&mut chunk, Vec::with_capacity(room)));
            piece.clear();
            printf_piece(b, next, true, &mut piece);
        }
        chunk.extend_from_slice(&piece);
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// One byte inside a single-quoted printf format. Printable ASCII stays
/// literal except `'` (it would end the quoting), `\` and `%` (printf
/// syntax: `\\`, `%%`), and a `-` that starts the format (dash's printf
/// takes it for an option, and `printf --` is not portable). Everything
/// else is an octal escape of one to three digits: three only when the next
/// byte is a literal octal digit that would extend the escape.
fn printf_piece(b: u8, next: Option<u8>, first: bool, out: &mut Vec<u8>) {
    match b {
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'%' => out.extend_from_slice(b"%%"),
        b' '..=b'~' if b != b'\'' && !(b == b'-' && first) => out.push(b),
        _ => {
            let width = if matches!(next, Some(b'0'..=b'7')) {
                3
            } else {
                1
            };
            write!(out, "\\{b:0width$o}").expect("writing to a Vec");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let esc = |b: u8, next: Option<u8>, first: bool| {
            let mut v = Vec::new();
            printf_piece(b, next, first, &mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(esc(b'%', None, false), "%%");
        assert_eq!(esc(b'\\', None, false), "\\\\");
        assert_eq!(esc(b'\'', Some(b'a'), false), "\\47");
        assert_eq!(esc(0, Some(b'8'), false), "\\0");
        assert_eq!(esc(0, Some(b'7'), false), "\\000");
        assert_eq!(esc(0o377, None, false), "\\377");
        assert_eq!(esc(b'7', None, false), "7");
        assert_eq!(esc(b'-', None, true), "\\55");
        // "\550" would be one byte: a digit after the escape widens it.
        assert_eq!(esc(b'-', Some(b'0'), true), "\\055");
        assert_eq!(esc(b'-', None, false), "-");
        assert_eq!(esc(b'\n', None, false), "\\12");
        // A chunk boundary re-escapes a leading '-'.
        let chunks = printf_chunks(b"abc-d", 3);
        assert_eq!(
            chunks,
            vec![b"abc".to_vec(), b"\\55".to_vec(), b"d".to_vec()]
        );
    }
}
