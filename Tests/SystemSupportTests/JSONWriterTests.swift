import Foundation
import SystemSupport
import Testing

/// The one JSON writer: members in the order written, numbers and strings as the formats fix them.
@Suite struct JSONWriterTests {
    @Test func keepsTheOrderMembersAreWrittenIn() {
        var json = JSONWriter(escaping: .minimal)
        json.object { json in
            json.member("z", 1)
            json.member("a", "x")
            json.key("list")
            json.array([1, 2]) { json, number in json.integer(Int64(number)) }
            json.member("skipped", nil as String?)
            json.key("nothing")
            json.null()
        }
        #expect(json.text == #"{"z":1,"a":"x","list":[1,2],"nothing":null}"#)
    }

    /// Trace and event lines escape only what JSON requires; the lobby's answers escape as
    /// JSONEncoder does.
    @Test func escapesStringsInTheStyleAsked() throws {
        let text = "a/b\"c\\\u{08}\u{0C}\n\u{01}é"
        var minimal = JSONWriter(escaping: .minimal)
        minimal.string(text)
        #expect(minimal.text == #""a/b\"c\\\u0008\u000c\n\u0001é""#)
        var likeEncoder = JSONWriter(escaping: .likeJSONEncoder)
        likeEncoder.string(text)
        #expect(likeEncoder.text == String(decoding: try JSONEncoder().encode(text), as: UTF8.self))
    }

    @Test func writesNumbersWithTheirFixedPlacesOrShortest() {
        var json = JSONWriter()
        json.array([0.0]) { json, _ in
            json.fixed(2.5, places: 2)
            json.fixed(-0.0001, places: 3)
            json.fixed(.nan, places: 1)
            json.shortest(3)
            json.shortest(0.1)
            json.shortest(.infinity)
            json.double(3)
        }
        #expect(json.text == "[2.50,0.000,null,3.0,0.1,null,3]")
    }

    /// `encodable` writes keys in `encode(to:)` order, `JSONFixedNumber` with its places.
    @Test func encodesAnEncodableInItsOwnKeyOrder() throws {
        struct Reading: Encodable {
            enum CodingKeys: String, CodingKey { case time = "t", distance = "distance_m", names }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode("now", forKey: .time)
                try c.encode(JSONFixedNumber(value: 1.5, places: 2), forKey: .distance)
                try c.encode(["b", "a"], forKey: .names)
            }
        }
        var json = JSONWriter(escaping: .minimal)
        try json.encodable(Reading())
        #expect(json.text == #"{"t":"now","distance_m":1.50,"names":["b","a"]}"#)
    }
}
