import Foundation
import Traces

/// Writes an `Encodable` value as one line of JSON, its keys in the order `encode(to:)` gives
/// them, strings escaped and integers written as ``JSONText`` does.
///
/// JSONEncoder on Linux writes an object's keys in an order of its own (and only sorts them on
/// request), while the agent's event lines promise the order README documents; this encoder
/// keeps the order the value's `encode(to:)` chose, so that method alone defines the format.
/// Numbers that need a fixed number of places are encoded as ``JSONFixedNumber``.
struct JSONLineEncoder {
    func encode(_ value: some Encodable) throws -> String {
        try JSONNode.of(value, codingPath: []).text
    }
}

/// A number written with a fixed number of decimal places (`2.50`), which JSONEncoder would
/// shorten (`2.5`); other encoders get the plain number.
struct JSONFixedNumber: Encodable, Equatable {
    var value: Double
    var places: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// The value being built: literal JSON text, or an object or array still being filled.
private final class JSONNode {
    private enum Content {
        case literal(String)
        case object([(key: String, node: JSONNode)])
        case array([JSONNode])
    }

    private var content: Content = .literal("null")

    var text: String {
        switch content {
        case .literal(let text): text
        case .object(let members): "{" + members.map { JSONText.string($0.key) + ":" + $0.node.text }.joined(separator: ",") + "}"
        case .array(let elements): "[" + elements.map(\.text).joined(separator: ",") + "]"
        }
    }

    static func literal(_ text: String) -> JSONNode {
        let node = JSONNode()
        node.content = .literal(text)
        return node
    }

    /// The node for `value`: scalars directly, anything else through its `encode(to:)`.
    static func of(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONNode {
        switch value {
        case let text as String: return literal(JSONText.string(text))
        case let flag as Bool: return literal(flag ? "true" : "false")
        case let number as any BinaryInteger: return literal(String(describing: number))
        case let number as JSONFixedNumber: return literal(JSONText.fixed(number.value, number.places))
        case let number as Double: return literal(JSONText.shortest(number))
        case let number as Float: return literal(JSONText.shortest(Double(number)))
        default:
            let node = JSONNode()
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            return node
        }
    }

    func makeObject() { if case .object = content {} else { content = .object([]) } }
    func makeArray() { if case .array = content {} else { content = .array([]) } }

    func set(_ key: String, _ node: JSONNode) {
        guard case .object(var members) = content else { return }
        members.removeAll { $0.key == key }
        members.append((key, node))
        content = .object(members)
    }

    func append(_ node: JSONNode) {
        guard case .array(var elements) = content else { return }
        elements.append(node)
        content = .array(elements)
    }

    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }

    func replace(with other: JSONNode) { content = other.content }

    private struct NodeEncoder: Encoder {
        let node: JSONNode
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            node.makeObject()
            return KeyedEncodingContainer(Keyed(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            node.makeArray()
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node, codingPath: codingPath) }
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: JSONNode
        var codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .literal("null")) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.set(key.stringValue, try JSONNode.of(value, codingPath: codingPath + [key]))
        }

        mutating func nestedContainer<Nested: CodingKey>(keyedBy type: Nested.Type, forKey key: Key) -> KeyedEncodingContainer<Nested> {
            let child = JSONNode()
            child.makeObject()
            node.set(key.stringValue, child)
            return KeyedEncodingContainer(Keyed<Nested>(node: child, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = JSONNode()
            child.makeArray()
            node.set(key.stringValue, child)
            return Unkeyed(node: child, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { NodeEncoder(node: node, codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            let child = JSONNode()
            node.set(key.stringValue, child)
            return NodeEncoder(node: child, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let node: JSONNode
        var codingPath: [any CodingKey]
        var count: Int { node.count }

        mutating func encodeNil() throws { node.append(.literal("null")) }
        mutating func encode<T: Encodable>(_ value: T) throws { node.append(try JSONNode.of(value, codingPath: codingPath)) }

        mutating func nestedContainer<Nested: CodingKey>(keyedBy type: Nested.Type) -> KeyedEncodingContainer<Nested> {
            let child = JSONNode()
            child.makeObject()
            node.append(child)
            return KeyedEncodingContainer(Keyed<Nested>(node: child, codingPath: codingPath))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = JSONNode()
            child.makeArray()
            node.append(child)
            return Unkeyed(node: child, codingPath: codingPath)
        }

        mutating func superEncoder() -> any Encoder {
            let child = JSONNode()
            node.append(child)
            return NodeEncoder(node: child, codingPath: codingPath)
        }
    }

    private struct Single: SingleValueEncodingContainer {
        let node: JSONNode
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.replace(with: .literal("null")) }
        mutating func encode<T: Encodable>(_ value: T) throws { node.replace(with: try JSONNode.of(value, codingPath: codingPath)) }
    }
}
