//! The argv pass (every argv form) and the --stdin request on arbitrary
//! input: no panic, and every error is an invalid_argument.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use as_edit::args::parse_stdin_request;
use as_edit::dispatch::argv::read;
use as_edit::protocol::ErrorKind;
use as_edit::request::EditOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let args: Vec<OsString> = data.split(|b| *b == 0).map(|a| OsString::from_vec(a.to_vec())).collect();
    if let Err(f) = read(&args, None) {
        assert_eq!(f.kind, ErrorKind::InvalidArgument);
    }
    if let Err(f) = parse_stdin_request(data, EditOptions::default()) {
        assert_eq!(f.kind, ErrorKind::InvalidArgument);
    }
});
