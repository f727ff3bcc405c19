//! Turning measurements into the report's files: CSV, SVG charts, and the
//! README with its tables and decision guide.

pub mod charts;
pub mod csv;
pub mod evidence;
pub mod guide;
pub mod markdown;
pub mod plot;
pub mod sections;
pub mod table;
