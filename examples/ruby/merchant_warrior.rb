# A small client of the gateway's form-encoded / XML mode, written the way ActiveMerchant's adapter
# builds its requests: activemerchant/active_merchant@ca45b1b063ce2e1495e1427e0a1d42dcb482d57d:lib/active_merchant/billing/gateways/merchant_warrior.rb
# (#post_data: "k=CGI.escape(v.to_s)" joined by "&", so an absent value goes as an empty string;
# #add_auth and #url_for: a call naming a card (cardID or cardName) goes to "/token/" + "/" + action,
# with no `method` field, any other to /post/ with one; #verification_hash and
# #void_verification_hash: the older hash form md5(lower(passphrase + ...)) without the inner md5;
# #parse: the root's children read by name with REXML; success is responseCode "0").
# A token purchase with cardKey and cardKeyReplace is the 2011 adapter's, which sent both keys:
# activemerchant/active_merchant@04ae68b4361007685bfeeb5577d2afb0ffc1e72f:lib/active_merchant/billing/gateways/merchant_warrior.rb#token_process_card.
# Ruby's standard library only (net/http, REXML, digest): no rubygems registry is reachable here.
require 'cgi'
require 'digest/md5'
require 'net/http'
require 'rexml/document'
require 'uri'

class MerchantWarrior
  # transaction, older form: lower(passphrase + merchantUUID + amount + currency).
  def self.transaction_preimage(passphrase, uuid, amount, currency)
    (passphrase + uuid + amount + currency).downcase
  end

  # query, older form: lower(passphrase + merchantUUID + transactionID) (#void_verification_hash).
  def self.query_preimage(passphrase, uuid, transaction_id)
    (passphrase + uuid + transaction_id).downcase
  end

  # settlement has no older form: md5(passphrase) + lower(merchantUUID) + from + to.
  def self.settlement_preimage(passphrase, uuid, from, to)
    Digest::MD5.hexdigest(passphrase) + uuid.downcase + from + to
  end

  def initialize(base_url, merchant_uuid, api_key, passphrase)
    @base_url = base_url
    @merchant_uuid = merchant_uuid
    @api_key = api_key
    @passphrase = passphrase
  end

  # processCard / processAuth with card data (#purchase, #authorize, #add_address, #add_creditcard).
  def card_payment(action, money, currency, product, card)
    post = {}
    add_amount(post, money, currency)
    post['transactionProduct'] = product
    post['customerName'] = card[:name]
    post['customerCountry'] = 'AU'
    post['customerState'] = 'Queensland'
    post['customerCity'] = 'Brisbane'
    post['customerAddress'] = '123 test st'
    post['customerPostCode'] = '4000'
    post['customerIP'] = nil
    post['customerPhone'] = nil
    post['customerEmail'] = nil
    post['paymentCardNumber'] = card[:number]
    post['paymentCardName'] = card[:name]
    post['paymentCardExpiry'] = card[:expiry]
    post['paymentCardCSC'] = card[:csc] if card[:csc]
    commit(action, post)
  end

  def capture(money, currency, transaction_id)
    post = {}
    add_amount(post, money, currency)
    post['transactionID'] = transaction_id
    post['captureAmount'] = money
    commit('processCapture', post)
  end

  def refund(money, currency, transaction_id)
    post = {}
    add_amount(post, money, currency)
    post['transactionID'] = transaction_id
    post['refundAmount'] = money
    commit('refundCard', post)
  end

  # #void: the amount is sent (the adapter says the gateway wants it) and the void hash.
  def void(transaction_id, money)
    post = { 'transactionAmount' => money, 'hash' => md5(self.class.query_preimage(@passphrase, @merchant_uuid, transaction_id)) }
    post['transactionID'] = transaction_id
    commit('processVoid', post)
  end

  # queryCard is not in the adapter: built as its void is.
  def query_card(transaction_id)
    commit('queryCard', 'transactionID' => transaction_id,
                        'hash' => md5(self.class.query_preimage(@passphrase, @merchant_uuid, transaction_id)))
  end

  # #store: addCard, sent to /token//addCard because it names cardName.
  def store(card)
    commit('addCard', 'cardName' => card[:name], 'cardNumber' => card[:number],
                      'cardExpiryMonth' => card[:expiry][0, 2], 'cardExpiryYear' => card[:expiry][2, 2])
  end

  # cardInfo is not in the adapter: it names cardID, so it goes to /token//cardInfo as its token calls do.
  def card_info(card_id)
    commit('cardInfo', 'cardID' => card_id)
  end

  # A purchase with a stored card (#purchase with a token: #add_token sends cardID alone); with
  # card_key, the 2011 adapter's cardKey + cardKeyReplace.
  def token_purchase(money, currency, product, card_id, card_key = nil, card_key_replace = nil)
    post = {}
    add_amount(post, money, currency)
    post['transactionProduct'] = product
    post['cardID'] = card_id
    if card_key
      post['cardKey'] = card_key
      post['cardKeyReplace'] = card_key_replace
    end
    commit('processCard', post)
  end

  # getSettlement is not in the adapter: /post/ with the settlement hash.
  def settlement(from, to)
    commit('getSettlement', 'settlementFrom' => from, 'settlementTo' => to,
                            'hash' => md5(self.class.settlement_preimage(@passphrase, @merchant_uuid, from, to)))
  end

  private

  def md5(text)
    Digest::MD5.hexdigest(text)
  end

  def add_amount(post, money, currency)
    post['transactionAmount'] = money
    post['transactionCurrency'] = currency
    post['hash'] = md5(self.class.transaction_preimage(@passphrase, @merchant_uuid, money, currency))
  end

  def token?(post)
    post['cardID'] || post['cardName']
  end

  def commit(action, post)
    post['merchantUUID'] = @merchant_uuid
    post['apiKey'] = @api_key
    post['method'] = action unless token?(post)
    # TOKEN_TEST_URL ends in "/" and #url_for joins with "/": the path has two slashes.
    path = token?(post) ? ['/token/', action].join('/') : '/post/'
    parse(Net::HTTP.post(URI(@base_url + path), post.collect { |k, v| "#{k}=#{CGI.escape(v.to_s)}" }.join('&'),
                         'Content-Type' => 'application/x-www-form-urlencoded'))
  end

  # The root's children by name (the adapter underscores the names; they are kept here so that the
  # answers of the three languages' clients read alike).
  def parse(response)
    unless response['Content-Type'].to_s.include?('xml')
      return { 'httpStatus' => response.code.to_i, 'contentType' => response['Content-Type'],
               'bytes' => response.body.bytesize, 'zip' => response.body.start_with?("PK\x03\x04".b) }
    end
    xml = REXML::Document.new(response.body)
    raise "not an mwResponse answer: #{response.body[0, 200]}" unless xml.root && xml.root.name == 'mwResponse'

    xml.root.elements.to_a.to_h { |node| [node.name, node.text.to_s] }
  end
end
