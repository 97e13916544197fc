import Foundation
import Hummingbird
import Lobby
import NIOCore

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
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            if let date = try? Date(text, strategy: .iso8601) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an ISO 8601 date like 2026-01-31T12:00:00Z.")
        }
        return decoder
    }()

    /// Reads the whole body (at most `limit` bytes) and decodes it as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = maximumBytes) async throws -> T {
        let buffer = try await bytes(of: request, limit: limit)
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError(error)
        }
    }

    /// Reads the whole body, refusing it with 413 past `limit` bytes.
    static func bytes(of request: Request, limit: Int) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, "bodyTooLarge", "The body is \(length) bytes; the limit is \(limit) bytes.")
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "bodyTooLarge", "The body is larger than the limit of \(limit) bytes.")
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
