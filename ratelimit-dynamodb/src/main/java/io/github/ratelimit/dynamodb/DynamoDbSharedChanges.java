package io.github.ratelimit.dynamodb;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.store.SharedChanges;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The changes made to policies at run time, in one item, {@code <prefix>#changes} (outside the items
 * {@code clear()} deletes, which start with {@code <prefix>:}): an attribute {@code c:<policy>} per policy, its values
 * encoded as one line; a dropped change is an empty string. Each instance reads the item, strongly consistent, about
 * once a second.
 */
final class DynamoDbSharedChanges implements SharedChanges {

	private static final String ATTRIBUTE_PREFIX = "c:";

	private final DynamoDbCalls calls;

	private final String pk;

	DynamoDbSharedChanges(DynamoDbCalls calls, String keyPrefix) {
		this.calls = calls;
		this.pk = keyPrefix + "#changes";
	}

	@Override
	public void put(String policy, Map<String, String> values) {
		DynamoDbCalls.join(this.calls.update(this.pk, "SET #p = :v", "attribute_exists(#p) OR attribute_not_exists(#p)",
				Map.of("#p", ATTRIBUTE_PREFIX + policy),
				Map.of(":v", AttributeValue.fromS(values.isEmpty() ? "" : SharedChanges.encode(values))),
				this.calls.deadline()));
	}

	@Override
	public Map<String, Map<String, String>> readAll() {
		Map<String, AttributeValue> item = DynamoDbCalls.join(this.calls.get(this.pk, this.calls.deadline()));
		Map<String, Map<String, String>> changes = new LinkedHashMap<>();
		item.forEach((attribute, value) -> {
			if (attribute.startsWith(ATTRIBUTE_PREFIX) && value.s() != null && !value.s().isEmpty()) {
				changes.put(attribute.substring(ATTRIBUTE_PREFIX.length()), SharedChanges.decode(value.s()));
			}
		});
		return changes;
	}

}
