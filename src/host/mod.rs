//! Host library (see issue 4).
