"""Runs one operation of merchant_warrior.py and prints the gateway's answer as JSON.

    python3 run.py OPERATION [name=value ...]

The account comes from the environment (MW_BASE_URL, MW_MERCHANT_UUID, MW_API_KEY, MW_PASSPHRASE);
test/examples/clients.test.ts passes the sandbox's, read from the spec.
"""
import json
import os
import sys

from merchant_warrior import MerchantWarrior

operation = sys.argv[1] if len(sys.argv) > 1 else ''
args = dict(pair.split('=', 1) for pair in sys.argv[2:])
mw = MerchantWarrior(*(os.environ[name] for name in ('MW_BASE_URL', 'MW_MERCHANT_UUID', 'MW_API_KEY', 'MW_PASSPHRASE')))


def card():
    return {'number': args['card'], 'expiry': args['expiry'], 'csc': args.get('csc'), 'name': args.get('name', 'Jane Citizen')}


def order():
    return args['amount'], args['currency'], args.get('product', 'Example order')


operations = {
    'purchase': lambda: mw.card_payment('processCard', *order(), card()),
    'authorise': lambda: mw.card_payment('processAuth', *order(), card()),
    'capture': lambda: mw.capture(args['transactionID'], args['amount'], args['currency']),
    'refund': lambda: mw.refund(args['transactionID'], args['amount'], args['currency']),
    'void': lambda: mw.on_transaction('processVoid', args['transactionID']),
    'queryCard': lambda: mw.on_transaction('queryCard', args['transactionID']),
    'addCard': lambda: mw.add_card(card()),
    'cardInfo': lambda: mw.card_info(args['cardID']),
    'tokenPurchase': lambda: mw.token_purchase(args['cardID'], *order(), args.get('cardKey'), args.get('cardKeyReplace')),
    'getSettlement': lambda: mw.settlement(args['from'], args['to']),
}
if operation not in operations:
    sys.exit("unknown operation '%s'" % operation)
try:
    answer = operations[operation]()
except KeyError as missing:
    sys.exit("%s needs %s=... (python3 run.py %s name=value ...)" % (operation, missing.args[0], operation))
print(json.dumps(answer))
