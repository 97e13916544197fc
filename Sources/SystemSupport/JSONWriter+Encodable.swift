import Foundation

/// A number written with a fixed number of decimal places (`2.50`), which JSONEncoder would
/// shorten (`2.5`); other encoders get the plain number.
public struct JSONFixedNumber: Encodable, Equatable, Sendable {
    public var value: Double
    public var places: Int

    public init(value: Double, places: Int) {
        self.value = value
        self.places = places
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// The value being built: a scalar, or an object or array still being filled.
final class JSONNode {
    private enum Content {
        case null
        case string(String)
        case boolean(Bool)
        /// An integer's digits.
        case raw(String)
        case fixed(Double, places: Int)
        case shortest(Double)
        case object([(key: String, node: JSONNode)])
        case array([JSONNode])
    }

    private var content: Content = .null

    func write(to json: inout JSONWriter) {
        switch content {
        case .null: json.null()
        case .string(let text): json.string(text)
        case .boolean(let flag): json.boolean(flag)
        case .raw(let text): json.raw(text)
        case .fixed(let value, let places): json.fixed(value, places: places)
        case .shortest(let value): json.shortest(value)
        case .object(let members):
            json.object { json in
                for member in members {
                    json.key(member.key)
                    member.node.write(to: &json)
                }
            }
        case .array(let elements): json.array(elements) { json, node in node.write(to: &json) }
        }
    }

    private static func literal(_ content: Content) -> JSONNode {
        let node = JSONNode()
        node.content = content
        return node
    }

    /// The node for `value`: scalars directly, anything else through its `encode(to:)`.
    static func of(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONNode {
        switch value {
        case let text as String: return literal(.string(text))
        case let flag as Bool: return literal(.boolean(flag))
        case let number as any BinaryInteger: return literal(.raw(String(describing: number)))
        case let number as JSONFixedNumber: return literal(.fixed(number.value, places: number.places))
        case let number as Double: return literal(.shortest(number))
        case let number as Float: return literal(.shortest(Double(number)))
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

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .literal(.null)) }

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

        mutating func encodeNil() throws { node.append(.literal(.null)) }
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

        mutating func encodeNil() throws { node.replace(with: .literal(.null)) }
        mutating func encode<T: Encodable>(_ value: T) throws { node.replace(with: try JSONNode.of(value, codingPath: codingPath)) }
    }
}
