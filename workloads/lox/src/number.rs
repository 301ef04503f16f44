//! Number formatting: how Lox prints a number, i.e. C's `printf("%g", n)` as clox uses it.
//!
//! `%g` with the default precision of 6 significant digits: the value is rounded to 6
//! significant digits; if the decimal exponent of the rounded value is below -4 or at least 6 it
//! is written in exponent form (`1e+06`, `1.5e-05`, at least two exponent digits), otherwise in
//! plain form; trailing zeros of the fraction, and then a trailing `.`, are removed. Negative
//! zero prints as `-0`, infinities as `inf` / `-inf`, and every NaN as `nan` (glibc would print
//! `-nan` for a NaN with the sign bit set, such as x86's `0/0`; we print `nan` regardless so the
//! output does not depend on the hardware).

/// Significant digits of `%g`'s default precision.
const PRECISION: i32 = 6;

/// Formats `value` the way Lox's `print` does (C's `%g`).
///
/// ```
/// use lox::format_number;
/// assert_eq!(format_number(3.0), "3");
/// assert_eq!(format_number(0.1 + 0.2), "0.3");
/// assert_eq!(format_number(1234567.0), "1.23457e+06");
/// assert_eq!(format_number(-0.0), "-0");
/// ```
pub fn format_number(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Round to PRECISION significant digits first: the exponent that decides the style is the
    // exponent after rounding (999999.5 becomes 1e+06). Rust's formatting is exact and rounds
    // ties to even, like glibc's printf.
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` output has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    if !(-4..PRECISION).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_fraction_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (PRECISION - 1 - exponent) as usize;
        strip_fraction_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

/// Removes trailing zeros after a decimal point, then the point itself if nothing follows it.
fn strip_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::format_number as f;

    #[test]
    fn integers() {
        assert_eq!(f(0.0), "0");
        assert_eq!(f(1.0), "1");
        assert_eq!(f(-1.0), "-1");
        assert_eq!(f(42.0), "42");
        assert_eq!(f(100.0), "100");
        assert_eq!(f(123456.0), "123456");
        assert_eq!(f(999999.0), "999999");
        assert_eq!(f(-999999.0), "-999999");
    }

    #[test]
    fn six_significant_digits() {
        assert_eq!(f(1234567.0), "1.23457e+06");
        assert_eq!(f(std::f64::consts::PI), "3.14159");
        assert_eq!(f(1.234567), "1.23457");
        assert_eq!(f(1.0 / 3.0), "0.333333");
        assert_eq!(f(2.0 / 3.0), "0.666667");
        assert_eq!(f(123.456), "123.456");
        assert_eq!(f(123.4567), "123.457");
        assert_eq!(f(0.1 + 0.2), "0.3");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(0.5), "0.5");
        assert_eq!(f(10.25), "10.25");
    }

    #[test]
    fn exponent_form_thresholds() {
        assert_eq!(f(1000000.0), "1e+06");
        assert_eq!(f(-1000000.0), "-1e+06");
        assert_eq!(f(100000.0), "100000");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(0.00012345), "0.00012345");
        assert_eq!(f(0.00001), "1e-05");
        assert_eq!(f(0.000015), "1.5e-05");
        assert_eq!(f(1e100), "1e+100");
        assert_eq!(f(1.5e-300), "1.5e-300");
        assert_eq!(f(f64::MAX), "1.79769e+308");
        assert_eq!(f(f64::MIN_POSITIVE), "2.22507e-308");
        assert_eq!(f(5e-324), "4.94066e-324");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(123456789.0), "1.23457e+08");
    }

    #[test]
    fn rounding_decides_the_exponent() {
        // Rounds up to 1e+06, so exponent form.
        assert_eq!(f(999999.5), "1e+06");
        assert_eq!(f(999999.4), "999999");
        // Rounds up to 0.0001, so plain form.
        assert_eq!(f(0.0000999999), "9.99999e-05");
        assert_eq!(f(0.00009999995), "0.0001");
        assert_eq!(f(9.9999996), "10");
        // Exact ties round to even, as glibc does.
        assert_eq!(f(1234565.0), "1.23456e+06");
        assert_eq!(f(1234575.0), "1.23458e+06");
        assert_eq!(f(0.5), "0.5");
        assert_eq!(f(2.5), "2.5");
    }

    #[test]
    fn special_values() {
        assert_eq!(f(-0.0), "-0");
        assert_eq!(f(f64::NAN), "nan");
        assert_eq!(f(-f64::NAN), "nan");
        assert_eq!(f(f64::INFINITY), "inf");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
    }
}
