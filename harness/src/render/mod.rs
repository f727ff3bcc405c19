//! Turning measurements into the report's files: CSV, SVG figures (one
//! style table for every filter), and the README with its decision guide.

pub mod charts;
pub mod csv;
pub mod evidence;
pub mod guide;
pub mod markdown;
pub mod pick;
pub mod plot;
pub mod section;
pub mod sections;
pub mod style;
pub mod table;
