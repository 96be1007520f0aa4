# Reads generated/hash-vectors.json on stdin and prints, as JSON, the preimage and hash this client
# computes for each vector of a recipe and form it signs with; test/examples/hashes.test.ts compares.
require 'json'
require_relative 'merchant_warrior'

RECIPES = {
  %w[transaction legacy] => lambda { |p, i|
    MerchantWarrior.transaction_preimage(p, i['merchantUUID'], i['transactionAmount'], i['transactionCurrency'])
  },
  %w[query legacy] => lambda { |p, i|
    MerchantWarrior.query_preimage(p, i['merchantUUID'], i['transactionID'] || i['transactionReferenceID'])
  },
  %w[settlement current] => lambda { |p, i|
    MerchantWarrior.settlement_preimage(p, i['merchantUUID'], i['settlementFrom'], i['settlementTo'])
  }
}.freeze

computed = JSON.parse($stdin.read)['vectors'].filter_map do |v|
  recipe = RECIPES[[v['recipe'], v['form']]]
  next unless recipe

  preimage = recipe.call(v['passphrase'], v['inputs'])
  { recipe: v['recipe'], form: v['form'], preimage: preimage, hash: Digest::MD5.hexdigest(preimage) }
end
puts JSON.generate(computed)
