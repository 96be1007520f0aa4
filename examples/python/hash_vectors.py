"""Reads generated/hash-vectors.json on stdin and prints, as JSON, the preimage and hash this client
computes for each vector of a recipe and form it signs with; test/examples/hashes.test.ts compares."""
import json
import sys

from merchant_warrior import md5, query_preimage, settlement_preimage, transaction_preimage

RECIPES = {
    ('transaction', 'legacy'): lambda p, i: transaction_preimage(p, i['merchantUUID'], i['transactionAmount'], i['transactionCurrency']),
    ('query', 'legacy'): lambda p, i: query_preimage(p, i['merchantUUID'], i.get('transactionID') or i['transactionReferenceID']),
    ('settlement', 'current'): lambda p, i: settlement_preimage(p, i['merchantUUID'], i['settlementFrom'], i['settlementTo']),
}
computed = []
for v in json.load(sys.stdin)['vectors']:
    recipe = RECIPES.get((v['recipe'], v['form']))
    if recipe:
        preimage = recipe(v['passphrase'], v['inputs'])
        computed.append({'recipe': v['recipe'], 'form': v['form'], 'preimage': preimage, 'hash': md5(preimage)})
print(json.dumps(computed))
