//! The status page at `/`: the jobs of the token typed in, their progress, updated every second.
//! One static page, no build step; the token stays in the browser's session storage.

/// The page.
pub const PAGE: &str = include_str!("page.html");
