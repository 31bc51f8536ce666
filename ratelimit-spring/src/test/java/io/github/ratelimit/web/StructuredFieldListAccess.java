package io.github.ratelimit.web;

import java.util.List;

/**
 * Lets tests of other packages parse structured field lists.
 */
public final class StructuredFieldListAccess {

	private StructuredFieldListAccess() {
	}

	/** Parse a list of strings with parameters and return the strings, decoded. */
	public static List<String> names(String field) {
		return StructuredFieldList.parse(field).stream().map(StructuredFieldList.Member::decodedValue).toList();
	}

}
