//! The space section: bits per item for each target beside the lower bound.

use crate::experiments::measurements::Measurements;
use crate::experiments::space::SpaceRow;
use crate::render::section::Section;
use crate::text::format_count;

/// The space section of the README.
pub fn space_section(measured: &Measurements) -> String {
    let rows = &measured.space;
    let n = rows.first().map_or(0, |r| r.n);
    let mut section = Section::new("Space");
    section.paragraph(format_args!(
        "Bits per item at n = {} for each target p, beside the lower bound log2(1/p) that no \
         filter can beat (✓ meets the target, ≈ measured within it but its own exact FPP is over \
         it, ✗ misses it; `efficiency` in space.csv is \
         log2(1/measured FPP) / bits per item):",
        format_count(n)
    ));
    let fpps = &measured.config.accuracy_fpps;
    let mut header = vec!["filter".to_owned()];
    header.extend(fpps.iter().map(|p| format!("p = {p:e}")));
    header.push("formula".to_owned());
    let mut body: Vec<Vec<String>> = vec![{
        let mut cells = vec!["*lower bound log2(1/p)*".to_owned()];
        cells.extend(fpps.iter().map(|p| format!("{:.2}", -p.log2())));
        cells.push(String::new());
        cells
    }];
    for entry in &measured.entries {
        let mine: Vec<&SpaceRow> = rows.iter().filter(|r| r.filter == entry.name).collect();
        let Some(first) = mine.first() else { continue };
        let mut cells = vec![entry.name.to_owned()];
        for &p in fpps {
            cells.push(
                mine.iter()
                    .find(|r| r.target_fpp == p)
                    .map_or_else(String::new, |r| {
                        let formula = r
                            .formula_bits
                            .map_or_else(String::new, |f| format!(" (formula {f:.2})"));
                        format!("{:.2}{formula} {}", r.bits_per_item, r.target.mark())
                    }),
            );
        }
        cells.push(first.formula.clone());
        body.push(cells);
    }
    section.table(&header, &body);
    section.finish(&[])
}
