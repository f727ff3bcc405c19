"""redis-py's bf() and cf() (written for RedisBloom) against filterlab-redis-module.

    python3 -m venv /tmp/pyvenv && /tmp/pyvenv/bin/pip install redis
    /tmp/pyvenv/bin/python redis-module/tests/clients/redis_py.py PORT

PORT: a redis-server with the module loaded. Every call of the two
command groups is made with the client's own argument building and reply
parsing (RESP2, then RESP3); any difference from RedisBloom's replies that
the client notices fails with its exception. Prints one line per check.
"""
import sys

import redis


LABELS = {
    "capacity": "Capacity", "size": "Size", "filterNum": "Number of filters",
    "insertedNum": "Number of items inserted", "expansionRate": "Expansion rate",
    "bucketNum": "Number of buckets", "deletedNum": "Number of items deleted",
    "bucketSize": "Bucket size", "maxIteration": "Max iterations",
}


def fields(info):
    """BF.INFO / CF.INFO as redis-py gives it: its BFInfo / CFInfo object
    (RESP2) or the server's map (RESP3), by the server's labels."""
    if isinstance(info, dict):
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in info.items()}
    return {LABELS[name]: value for name, value in vars(info).items()}


def check(protocol, port):
    r = redis.Redis(port=port, protocol=protocol)
    r.flushall()
    bf, cf = r.bf(), r.cf()
    tag = f"RESP{protocol}"

    assert bf.create("bf", 0.01, 1000) is True
    assert bf.add("bf", "foo") in (1, True)
    assert [bool(x) for x in bf.madd("bf", "foo", "bar")] == [False, True]
    assert bool(bf.exists("bf", "bar")) and not bool(bf.exists("bf", "nope"))
    assert [bool(x) for x in bf.mexists("bf", "foo", "nope")] == [True, False]
    assert bf.card("bf") == 2
    info = fields(bf.info("bf"))
    assert (info["Capacity"], info["Number of items inserted"], info["Number of filters"],
            info["Expansion rate"]) == (1000, 2, 1, 2), info
    assert info["Size"] > 0
    assert bf.create("grows", 0.001, 100, expansion=4) is True
    assert bf.create("fixed", 0.01, 3, noScale=True) is True
    inserted = bf.insert("ins", ["a", "b"], capacity=500, error=0.001, expansion=2)
    assert [bool(x) for x in inserted] == [True, True]
    try:
        bf.insert("missing", ["a"], noCreate=True)
        raise AssertionError("NOCREATE created a filter")
    except redis.ResponseError as err:
        assert "not found" in str(err), err
    # SCANDUMP / LOADCHUNK through the client's own loop.
    chunks, it = [], 0
    while True:
        it, data = bf.scandump("bf", it)
        if it == 0:
            break
        chunks.append((it, data))
    assert len(chunks) >= 2
    for it, data in chunks:
        bf.loadchunk("copy", it, data)
    assert [bool(x) for x in bf.mexists("copy", "foo", "bar", "nope")] == [True, True, False]
    print(f"{tag} bf(): create add madd exists mexists card info insert scandump loadchunk: ok")

    assert cf.create("cf", 1000, expansion=2, bucket_size=4, max_iterations=50) is True
    assert cf.add("cf", "x") in (1, True)
    assert cf.addnx("cf", "x") in (0, False)
    assert cf.addnx("cf", "y") in (1, True)
    assert [bool(v) for v in cf.insert("cf", ["z", "w"])] == [True, True]
    assert list(cf.insertnx("cf", ["z", "v"])) == [0, 1]
    assert bool(cf.exists("cf", "x")) and not bool(cf.exists("cf", "nope"))
    assert [bool(v) for v in cf.mexists("cf", "x", "nope")] == [True, False]
    assert cf.count("cf", "x") == 1
    assert cf.delete("cf", "x") in (1, True)
    assert cf.count("cf", "x") == 0
    cinfo = fields(cf.info("cf"))
    assert (cinfo["Number of filters"], cinfo["Number of items inserted"],
            cinfo["Number of items deleted"], cinfo["Bucket size"], cinfo["Expansion rate"],
            cinfo["Max iterations"]) == (1, 4, 1, 4, 2, 50), cinfo
    chunks, it = [], 0
    while True:
        it, data = cf.scandump("cf", it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        cf.loadchunk("cfcopy", it, data)
    assert bool(cf.exists("cfcopy", "y"))
    print(f"{tag} cf(): create add addnx insert insertnx exists mexists count delete info scandump loadchunk: ok")


if __name__ == "__main__":
    port = int(sys.argv[1])
    for protocol in (2, 3):
        check(protocol, port)
