/// Reading SQL text the way the server does, just enough to number placeholders and split scripts:
/// quoted strings, quoted identifiers and comments are passed over.
public enum SQLText {
    /// `sql` with each `?` outside quotes and comments numbered for PostgreSQL (`$1`, `$2`, …), and
    /// the highest number. SQLite's numbered form `?NNN` (the same argument used twice) becomes
    /// `$NNN`, and a bare `?` after it takes the next number, as SQLite counts them.
    public static func numberingPlaceholders(_ sql: String) -> (sql: String, count: Int) {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 8)
        var count = 0
        scan(sql) { piece, isCode in
            guard isCode else { output += piece; return }
            var index = piece.startIndex
            while index < piece.endIndex {
                let character = piece[index]
                index = piece.index(after: index)
                guard character == "?" else {
                    output.append(character)
                    continue
                }
                let digits = piece[index...].prefix(while: { $0.isASCII && $0.isNumber })
                if let number = Int(digits), number > 0 {
                    count = max(count, number)
                    output += "$\(number)"
                    index = digits.endIndex
                } else {
                    count += 1
                    output += "$\(count)"
                }
            }
        }
        return (output, count)
    }

    /// The statements of a script, split at `;` outside quotes and comments, trimmed, empty ones
    /// dropped.
    public static func statements(of script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        scan(script) { piece, isCode in
            guard isCode else { current += piece; return }
            for character in piece {
                if character == ";" {
                    statements.append(current)
                    current = ""
                } else {
                    current.append(character)
                }
            }
        }
        statements.append(current)
        return statements
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && !isOnlyComments($0) }
    }

    private static func isOnlyComments(_ statement: String) -> Bool {
        var code = ""
        scan(statement) { piece, isCode in if isCode { code += piece } }
        return code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// Hands `sql` over in pieces, each either code or something quoted or commented (which is
    /// handed over whole, with its delimiters). An unterminated quote or comment runs to the end.
    static func scan(_ sql: String, _ emit: (Substring, Bool) -> Void) {
        var index = sql.startIndex
        var codeStart = index
        func flushCode(upTo end: String.Index) {
            if codeStart < end { emit(sql[codeStart..<end], true) }
        }
        while index < sql.endIndex {
            let character = sql[index]
            let next = sql.index(after: index)
            let startsLineComment = character == "-" && next < sql.endIndex && sql[next] == "-"
            let startsBlockComment = character == "/" && next < sql.endIndex && sql[next] == "*"
            if character == "'" || character == "\"" {
                flushCode(upTo: index)
                var end = next
                while end < sql.endIndex {
                    if sql[end] == character {
                        let after = sql.index(after: end)
                        // A doubled quote is a quote inside the string.
                        if after < sql.endIndex, sql[after] == character { end = sql.index(after: after); continue }
                        end = after
                        break
                    }
                    end = sql.index(after: end)
                }
                emit(sql[index..<end], false)
                index = end
                codeStart = end
            } else if startsLineComment {
                flushCode(upTo: index)
                let end = sql[index...].firstIndex(of: "\n") ?? sql.endIndex
                emit(sql[index..<end], false)
                index = end
                codeStart = end
            } else if startsBlockComment {
                flushCode(upTo: index)
                let rest = sql[sql.index(after: next)...]
                let end = rest.range(of: "*/").map(\.upperBound) ?? sql.endIndex
                emit(sql[index..<end], false)
                index = end
                codeStart = end
            } else {
                index = next
            }
        }
        flushCode(upTo: sql.endIndex)
    }
}

import Foundation
