import Foundation
import Hummingbird
import Lobby
import NIOCore
import SystemSupport

/// JSON in and out, with the lobby's conventions: camelCase keys, ISO 8601 dates (fractional
/// seconds optional on input), bodies read up to an explicit limit.
enum JSONBody {
    /// Largest JSON body accepted, in bytes.
    static let maximumBytes = 256 * 1024

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text.prefix(80))\" is not an ISO 8601 date like 2026-01-31T12:00:00Z.")
            }
            return date
        }
        return decoder
    }()

    /// An RFC 3339 date-time (ISO 8601 with a zone: `2026-01-31T12:00:00Z`, fractions of a second
    /// and `+02:00` allowed), every field in its range: Foundation's parser alone rolls
    /// `12:99:00` over to `13:39:00` and the 30th of February into March.
    static func date(_ text: String) -> Date? {
        // Read by position, not with a regular expression: an encounter report carries up to
        // 1,000 of these.
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, _ allowed: String) -> Bool { index < bytes.count && allowed.utf8.contains(bytes[index]) }
        guard let year = number(0..<4), byte(4, "-"), let month = number(5..<7), byte(7, "-"), let day = number(8..<10),
              byte(10, "Tt"), let hour = number(11..<13), byte(13, ":"), let minute = number(14..<16), byte(16, ":"),
              let second = number(17..<19)
        else { return nil }
        var index = 19
        if byte(index, ".") {
            let digits = bytes[(index + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            guard (1...9).contains(digits) else { return nil }
            index += 1 + digits
        }
        if byte(index, "Zz") {
            index += 1
        } else {
            guard byte(index, "+-"), let offsetHours = number(index + 1..<index + 3), byte(index + 3, ":"),
                  let offsetMinutes = number(index + 4..<index + 6), offsetHours < 24, offsetMinutes < 60 else { return nil }
            index += 6
        }
        guard index == bytes.count else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...days[month - 1]).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        let normalized = text.uppercased()
        if let date = try? Date(normalized, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(normalized, strategy: .iso8601)
    }

    /// Reads the whole body (at most `limit` bytes) and decodes it as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = maximumBytes) async throws -> T {
        let buffer = try await bytes(of: request, limit: limit)
        let data = Data(buffer.readableBytesView)
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            // Foundation on Linux reports a number that does not fit its field (70000 for a
            // UInt16, 2.5 for an integer) as a body that is not valid JSON, with no path.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, let number = unfittingNumber(T.self, in: data) {
                throw APIError(.badRequest, .invalidValue, """
                    \(number.path): \(number.value) does not fit this field: it takes a whole number where the API document \
                    says integer, within the field's range (GET /openapi.yaml).
                    """)
            }
            throw APIError(error)
        }
    }

    /// The path and text of the number that keeps `data` (valid JSON) from decoding as `T`: the
    /// first of its numbers that, replaced by 0, lets the body decode or fail for another reason.
    /// Looks at the first 256 numbers; nil when none of them is it or `data` is not JSON.
    static func unfittingNumber<T: Decodable>(_ type: T.Type, in data: Data) -> (path: String, value: String)? {
        guard let root = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) else { return nil }
        var numbers: [(path: [Any], value: NSNumber)] = []
        func collect(_ value: Any, at path: [Any]) {
            guard numbers.count < 256 else { return }
            if let object = value as? [String: Any] {
                for key in object.keys.sorted() { collect(object[key]!, at: path + [key]) }
            } else if let array = value as? [Any] {
                for (index, element) in array.enumerated() { collect(element, at: path + [index]) }
            } else if let number = value as? NSNumber, !(value is Bool) {
                numbers.append((path, number))
            }
        }
        collect(root, at: [])
        func zeroing(_ value: Any, at path: ArraySlice<Any>) -> Any {
            guard let step = path.first else { return 0 }
            if var object = value as? [String: Any], let key = step as? String, let child = object[key] {
                object[key] = zeroing(child, at: path.dropFirst())
                return object
            }
            if var array = value as? [Any], let index = step as? Int, array.indices.contains(index) {
                array[index] = zeroing(array[index], at: path.dropFirst())
                return array
            }
            return value
        }
        for number in numbers {
            guard let changed = try? JSONSerialization.data(withJSONObject: zeroing(root, at: number.path[...]), options: .fragmentsAllowed)
            else { continue }
            do {
                _ = try decoder.decode(T.self, from: changed)
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                continue
            } catch {}
            let path = number.path.map { step in (step as? Int).map { "[\($0)]" } ?? ".\(step)" }.joined()
            return (String(path.drop(while: { $0 == "." })), number.value.description)
        }
        return nil
    }

    /// Reads the whole body, refusing it with 413 past `limit` bytes.
    static func bytes(of request: Request, limit: Int) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, .bodyTooLarge, "The body is \(length) bytes; the limit is \(limit) bytes.")
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, .bodyTooLarge, "The body is larger than the limit of \(limit) bytes.")
        }
    }

    static func response(_ status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The same answer for the types that write their own JSON, without JSONEncoder's cost.
    static func response(_ status: HTTPResponse.Status, _ value: some Encodable & JSONWritable) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(value))))
    }
}
