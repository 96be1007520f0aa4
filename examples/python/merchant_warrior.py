"""A small client of the gateway's form-encoded / XML mode, written the way the Python client builds
its requests: jimbocoder/merchantwarrior-python@4c96b2782c28b26b7e5ba3d81033ae87fadec43f:merchantwarrior/api.py
(#construct_process_card_post_data and its siblings: a dict with `method`, posted form-encoded to
/post/, None values left out as `requests` leaves them out; #calculate_hash: the older hash form,
md5(lower(passphrase + ...)) without the inner md5, which the gateway still accepts) and
merchantwarrior/response.py (#Response: the answer's root must be `mwResponse`, fields read by name).
The standard library only (urllib, xml.etree): no PyPI registry is reachable here. That client has
no vault calls; they go to /token/ with a `method` field, the plain form of the gateway's paths.
"""

import hashlib
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET


def transaction_preimage(passphrase, uuid, amount, currency):
    """transaction, older form: lower(passphrase + merchantUUID + amount + currency)."""
    return (passphrase + uuid + amount + currency).lower()


def query_preimage(passphrase, uuid, transaction_id):
    """query, older form: lower(passphrase + merchantUUID + (transactionID or transactionReferenceID))."""
    return (passphrase + uuid + transaction_id).lower()


def settlement_preimage(passphrase, uuid, settlement_from, settlement_to):
    """settlement has no older form: md5(passphrase) + lower(merchantUUID) + from + to."""
    return md5(passphrase) + uuid.lower() + settlement_from + settlement_to


def md5(text):
    return hashlib.md5(text.encode('utf-8')).hexdigest()


class MerchantWarrior:
    def __init__(self, base_url, merchant_uuid, api_key, passphrase):
        self.base_url = base_url
        self.merchant_uuid = merchant_uuid
        self.api_key = api_key
        self.passphrase = passphrase

    def _fields(self, method):
        return {'method': method, 'merchantUUID': self.merchant_uuid, 'apiKey': self.api_key}

    def _transaction_hash(self, post_data):
        return md5(transaction_preimage(self.passphrase, post_data['merchantUUID'],
                                        post_data['transactionAmount'], post_data['transactionCurrency']))

    def card_payment(self, method, amount, currency, product, card):
        """processCard / processAuth (api.py#construct_process_card_post_data, #construct_process_auth_post_data)."""
        post_data = self._fields(method)
        post_data.update({
            'transactionAmount': amount,
            'transactionCurrency': currency,
            'transactionProduct': product,
            'customerName': card['name'],
            'customerCountry': 'au',
            'customerState': 'QLD',
            'customerCity': 'Brisbane',
            'customerAddress': '123 Test Street',
            'customerPostCode': '4000',
            'customerPhone': None,
            'customerEmail': None,
            'customerIP': None,
            'paymentCardNumber': card['number'],
            'paymentCardName': card['name'],
            'paymentCardExpiry': card['expiry'],
            'paymentCardCSC': card.get('csc'),
        })
        post_data['hash'] = self._transaction_hash(post_data)
        return self.send('/post/', post_data)

    def capture(self, transaction_id, amount, currency):
        post_data = self._fields('processCapture')
        post_data.update({'transactionAmount': amount, 'transactionCurrency': currency,
                          'transactionID': transaction_id, 'captureAmount': amount})
        post_data['hash'] = self._transaction_hash(post_data)
        return self.send('/post/', post_data)

    def refund(self, transaction_id, amount, currency):
        """api.py#construct_refund_card_post_data."""
        post_data = self._fields('refundCard')
        post_data.update({'transactionAmount': amount, 'transactionCurrency': currency,
                          'transactionID': transaction_id, 'transactionReferenceID': None,
                          'refundAmount': amount})
        post_data['hash'] = self._transaction_hash(post_data)
        return self.send('/post/', post_data)

    def on_transaction(self, method, transaction_id):
        """queryCard (api.py#construct_query_card_post_data) and processVoid: the query hash."""
        post_data = self._fields(method)
        post_data['transactionID'] = transaction_id
        post_data['hash'] = md5(query_preimage(self.passphrase, self.merchant_uuid, transaction_id))
        return self.send('/post/', post_data)

    def add_card(self, card):
        post_data = self._fields('addCard')
        post_data.update({'cardName': card['name'], 'cardNumber': card['number'],
                          'cardExpiryMonth': card['expiry'][:2], 'cardExpiryYear': card['expiry'][2:]})
        return self.send('/token/', post_data)

    def card_info(self, card_id):
        post_data = self._fields('cardInfo')
        post_data['cardID'] = card_id
        return self.send('/token/', post_data)

    def token_purchase(self, card_id, amount, currency, product, card_key=None, card_key_replace=None):
        post_data = self._fields('processCard')
        post_data.update({'transactionAmount': amount, 'transactionCurrency': currency,
                          'transactionProduct': product, 'cardID': card_id,
                          'cardKey': card_key, 'cardKeyReplace': card_key_replace})
        post_data['hash'] = self._transaction_hash(post_data)
        return self.send('/token/', post_data)

    def settlement(self, settlement_from, settlement_to):
        post_data = self._fields('getSettlement')
        post_data.update({'settlementFrom': settlement_from, 'settlementTo': settlement_to})
        post_data['hash'] = md5(settlement_preimage(self.passphrase, self.merchant_uuid,
                                                    settlement_from, settlement_to))
        return self.send('/post/', post_data)

    def send(self, path, post_data):
        """Posts the fields form-encoded (None left out, as `requests` does) and reads the answer."""
        body = urllib.parse.urlencode({k: v for k, v in post_data.items() if v is not None}).encode('utf-8')
        request = urllib.request.Request(self.base_url + path, data=body, method='POST', headers={
            'Content-Type': 'application/x-www-form-urlencoded'})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, content_type, content = response.status, response.headers.get('Content-Type', ''), response.read()
        except urllib.error.HTTPError as error:  # a refusal may come with a 4xx status: read it all the same
            status, content_type, content = error.code, error.headers.get('Content-Type', ''), error.read()
        if 'xml' not in content_type:
            # getSettlement answers a zip file.
            return {'httpStatus': status, 'contentType': content_type, 'bytes': len(content),
                    'zip': content.startswith(b'PK\x03\x04')}
        root = ET.fromstring(content)
        if root.tag != 'mwResponse':
            raise ValueError('No mwResponse node found in response from API: %r' % content[:200])
        return {child.tag: child.text or '' for child in root}
