//! The words every failure's detail shares: an errno as `strerror` says
//! it, a path as result lines show it.

use std::io;
use std::path::Path;

use rustix::io::Errno;

use crate::protocol::display_path;

/// Words for an errno, as `strerror` would say them.
pub(super) fn cause(e: Errno) -> String {
    io::Error::from(e).to_string()
}

pub(super) fn shown(p: &Path) -> String {
    display_path(p)
}
