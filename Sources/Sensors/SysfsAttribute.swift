import Glibc
import SystemSupport

/// Reading and writing the small text files of sysfs. Every error names the file.
enum Sysfs {
    /// The file's text without its trailing newline.
    static func readText(_ path: String) throws(SensorError) -> String {
        let fd = try SensorError.catching(try SystemCall.open(path, O_RDONLY))
        defer { SystemCall.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = try SensorError.catching(try SystemCall.read(fd, into: &chunk, path: path))
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        var text = String(decoding: bytes, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// Whether a file or directory exists at `path`.
    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    static func write(_ text: String, to path: String) throws(SensorError) {
        let fd = try SensorError.catching(try SystemCall.open(path, O_WRONLY | O_TRUNC))
        defer { SystemCall.close(fd) }
        try SensorError.catching(try SystemCall.write(fd, Array(text.utf8), path: path))
    }

    /// The names in a directory, sorted; empty when it cannot be read.
    static func list(_ directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Parses a decimal number such as `0.009576` or `-12`, naming the file when it is not one.
    static func number(_ path: String) throws(SensorError) -> Double {
        let text = try readText(path)
        return try parseNumber(text, path: path)
    }

    static func integer(_ path: String) throws(SensorError) -> Int {
        let text = try readText(path)
        guard let value = Int(text.trimming(" \t")) else {
            throw .malformedAttribute(path: path, text: text, reason: "expected an integer")
        }
        return value
    }

    static func parseNumber(_ text: String, path: String) throws(SensorError) -> Double {
        let trimmed = text.trimming(" \t")
        guard let value = Double(trimmed), value.isFinite,
              trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) })
        else {
            throw .malformedAttribute(path: path, text: text, reason: "expected a decimal number")
        }
        return value
    }

    /// Parses a space-separated list of numbers (an `_available` attribute). IIO also writes
    /// ranges as `[min step max]`; those give their two ends.
    static func numberList(_ path: String) throws(SensorError) -> [Double] {
        let text = try readText(path)
        let cleaned = text.replacingAll(of: "[]", with: " ")
        var values: [Double] = []
        for word in cleaned.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            values.append(try parseNumber(String(word), path: path))
        }
        if text.hasPrefix("["), values.count == 3 { return [values[0], values[2]] }
        return values
    }
}

extension String {
    /// The text with every character from `set` replaced by `replacement`.
    func replacingAll(of set: String, with replacement: Character) -> String {
        String(map { set.contains($0) ? replacement : $0 })
    }
}
