# Runs one operation of merchant_warrior.rb and prints the gateway's answer as JSON.
#   ruby run.rb OPERATION [name=value ...]
# The account comes from the environment (MW_BASE_URL, MW_MERCHANT_UUID, MW_API_KEY, MW_PASSPHRASE);
# test/examples/clients.test.ts passes the sandbox's, read from the spec.
require 'json'
require_relative 'merchant_warrior'

operation = ARGV[0].to_s
args = ARGV.drop(1).to_h { |pair| pair.split('=', 2) }
mw = MerchantWarrior.new(*%w[MW_BASE_URL MW_MERCHANT_UUID MW_API_KEY MW_PASSPHRASE].map { |name| ENV.fetch(name) })
card = -> { { number: args['card'], expiry: args['expiry'], csc: args['csc'], name: args.fetch('name', 'Longbob Longsen') } }
product = args.fetch('product', 'Example order')

answer =
  case operation
  when 'purchase' then mw.card_payment('processCard', args['amount'], args['currency'], product, card.call)
  when 'authorise' then mw.card_payment('processAuth', args['amount'], args['currency'], product, card.call)
  when 'capture' then mw.capture(args['amount'], args['currency'], args['transactionID'])
  when 'refund' then mw.refund(args['amount'], args['currency'], args['transactionID'])
  when 'void' then mw.void(args['transactionID'], args['amount'])
  when 'queryCard' then mw.query_card(args['transactionID'])
  when 'addCard' then mw.store(card.call)
  when 'cardInfo' then mw.card_info(args['cardID'])
  when 'tokenPurchase'
    mw.token_purchase(args['amount'], args['currency'], product, args['cardID'], args['cardKey'], args['cardKeyReplace'])
  when 'getSettlement' then mw.settlement(args['from'], args['to'])
  else abort "unknown operation '#{operation}'"
  end
puts JSON.generate(answer)
