//! Integration tests of filterlab-bloom, one module per filter type.

mod standard;
