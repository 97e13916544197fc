/// One D-Bus value of any type the wire format carries, except Unix file descriptors.
///
/// Containers carry the signatures of their elements so that empty arrays and dictionaries still
/// marshal with the right type. Arrays of bytes have their own case (`ay` is by far the most common
/// container in BlueZ: manufacturer data, service data, advertising flags).
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    /// `ay`.
    case bytes([UInt8])
    /// `a<element>`; every element must have the signature `element`.
    case array(element: DBusSignature, [DBusValue])
    /// `a{<key><value>}`; keys are basic types; order is kept as received.
    case dictionary(key: DBusSignature, value: DBusSignature, [DBusDictionaryEntry])
    /// `(<fields>)`; at least one field.
    case structure([DBusValue])
    /// `v`: a value that carries its own signature. (The only case that needs a box: containers
    /// hold arrays, which are already on the heap, and scalars stay unboxed.)
    indirect case variant(DBusValue)

    /// The value's complete D-Bus signature, e.g. `a{sv}`.
    public var signature: DBusSignature {
        DBusSignature(unchecked: signatureText)
    }

    var signatureText: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element.rawValue
        case .dictionary(let key, let value, _): "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let fields): "(" + fields.map(\.signatureText).joined() + ")"
        case .variant: "v"
        }
    }
}

/// One key/value pair of a D-Bus dictionary (`{kv}`).
public struct DBusDictionaryEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue

    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// An `a{sv}` dictionary, the shape of every property bag and option list in BlueZ.
    public static func stringVariantDictionary(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v",
                    entries.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map(DBusValue.string))
    }
}
