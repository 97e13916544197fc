import Foundation

/// What a displayed name may hold beyond the length and control-character checks of
/// ``Validation``: no invisible characters and no bidirectional controls (they make a name look
/// like another or reorder what is shown around it), and no word that mixes Latin, Greek and
/// Cyrillic letters (`Hаll` with a Cyrillic а beside `Hall`). Used for players' first and last
/// names and for location names.
enum NameRules {
    /// Why `value` may not be shown as a name, or nil when it may.
    static func problem(in value: String) -> String? {
        let scalars = Array(value.unicodeScalars)
        for (index, scalar) in scalars.enumerated() where isInvisible(scalar) {
            // Emoji sequences keep their joiner and presentation selectors (👩‍💻, ❤️).
            let before = index > 0 ? scalars[index - 1] : nil
            let after = index + 1 < scalars.count ? scalars[index + 1] : nil
            if scalar == "\u{200D}", let before, let after, isEmoji(before) || before == "\u{FE0F}", isEmoji(after) { continue }
            if scalar == "\u{FE0F}" || scalar == "\u{FE0E}", let before, isEmoji(before) { continue }
            let code = String(scalar.value, radix: 16, uppercase: true)
            return "must not contain invisible characters or text-direction controls (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))."
        }
        for word in value.split(whereSeparator: { $0.isWhitespace || $0 == "-" }) {
            let scripts = Set(word.unicodeScalars.compactMap(script))
            if scripts.count > 1 {
                return "mixes \(scripts.map(\.rawValue).sorted().joined(separator: " and ")) letters in \"\(word)\": write each word in one script."
            }
        }
        return nil
    }

    /// Invisible: Unicode's default-ignorable code points (zero-width spaces and joiners, BOMs,
    /// bidirectional controls, fillers such as U+3164, variation selectors) and the blank braille
    /// pattern, which is drawn as nothing.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.isBidiControl || scalar == "\u{2800}"
    }

    private static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isEmojiPresentation || (scalar.properties.isEmoji && scalar.value > 0xFF)
    }

    enum Script: String { case latin = "Latin", greek = "Greek", cyrillic = "Cyrillic" }

    /// The script of a letter among the three whose letters look alike; nil for anything else.
    static func script(_ scalar: Unicode.Scalar) -> Script? {
        guard scalar.properties.isAlphabetic else { return nil }
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF, 0x2C60...0x2C7F, 0xA720...0xA7FF, 0xFF21...0xFF3A, 0xFF41...0xFF5A:
            return .latin
        case 0x370...0x3FF, 0x1F00...0x1FFF:
            return .greek
        case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F:
            return .cyrillic
        default:
            return nil
        }
    }
}

/// The look-alike form of a username: two usernames with the same skeleton would be taken for
/// each other, so a second one is refused. Usernames are ASCII (``Validation/usernameCharacters``);
/// the folding is: case ignored; `I`, `l`, `1` and `|` read as `l`; `O` and `0` as `o`; `rn` as `m`;
/// `vv` as `w`; `5` as `s`; `.`, `_` and `-` as one separator.
enum UsernameSkeleton {
    static func of(_ username: String) -> String {
        var folded = ""
        for character in username.lowercased() {
            switch character {
            case "i", "1", "|": folded.append("l")
            case "0": folded.append("o")
            case "5": folded.append("s")
            case "_", ".": folded.append("-")
            default: folded.append(character)
            }
        }
        return folded.replacingOccurrences(of: "rn", with: "m").replacingOccurrences(of: "vv", with: "w")
    }
}
