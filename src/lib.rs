//! tidings
