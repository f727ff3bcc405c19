//! The report's CSV files: the data, one row per measurement.

use std::path::Path;

use serde::Serialize;

use crate::error::Error;
use crate::experiments::measurements::Measurements;

fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), Error> {
    let mut writer = csv::Writer::from_path(path)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    Ok(())
}

/// Writes accuracy.csv, space.csv, speed.csv, build.csv (static filters'
/// build memory), capacity.csv, churn.csv,
/// churn_removals.csv, growth.csv, sweep.csv and redis.csv into `dir`, each when its experiment ran.
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_all(measured: &Measurements, dir: &Path) -> Result<(), Error> {
    if !measured.accuracy.is_empty() {
        write_csv(&dir.join("accuracy.csv"), &measured.accuracy)?;
    }
    if !measured.space.is_empty() {
        write_csv(&dir.join("space.csv"), &measured.space)?;
    }
    if let Some(speed) = &measured.speed {
        write_csv(&dir.join("speed.csv"), &speed.rows)?;
        if !speed.builds.is_empty() {
            write_csv(&dir.join("build.csv"), &speed.builds)?;
        }
    }
    if let Some(capacity) = &measured.capacity {
        write_csv(&dir.join("capacity.csv"), &capacity.rows)?;
    }
    if let Some(churn) = &measured.churn {
        write_csv(&dir.join("churn.csv"), &churn.rows)?;
        write_csv(&dir.join("churn_removals.csv"), &churn.bogus)?;
    }
    if let Some(growth) = &measured.growth {
        write_csv(&dir.join("growth.csv"), &growth.rows)?;
    }
    if let Some(sweep) = &measured.sweep {
        write_csv(&dir.join("sweep.csv"), &sweep.rows)?;
    }
    if let Some(redis) = measured.redis.as_ref().filter(|r| !r.rows.is_empty()) {
        write_csv(&dir.join("redis.csv"), &redis.rows)?;
    }
    Ok(())
}
