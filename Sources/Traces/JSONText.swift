import Foundation

/// Small helpers to write JSON text with a fixed key order and number format, which the
/// contracts of DESIGN.md fix and JSONEncoder does not.
public enum JSONText {
    public static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A number with `decimals` places; `null` when not finite.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "null" }
        let text = String(format: "%.\(decimals)f", value)
        return text == "-0" || text.hasPrefix("-0.") && Double(text) == 0 ? String(text.dropFirst()) : text
    }

    /// The shortest text that reads back as the same Double.
    public static func shortest(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(format: "%.1f", value) }
        return "\(value)"
    }
}
