package io.github.ratelimit.dynamodb;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

class DynamoDbLayoutTests {

	private final JavaClasses dynamodb = LayoutRules.productionClasses("io.github.ratelimit.dynamodb");

	@Test
	void theStoreIsTheOnlyPublicClass() {
		LayoutRules.theOnlyPublicClassIs(DynamoDbRateLimitStore.class).check(this.dynamodb);
	}

	@Test
	void theDynamoDbStoreImportsNoSpringBootServletWebOrReactorTypes() {
		LayoutRules.storesAreFreeOfBootWebAndReactor().check(this.dynamodb);
	}

	@Test
	void theDynamoDbStoreImportsNoSpringAtAll() {
		noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework..").check(this.dynamodb);
	}

	@Test
	void theDynamoDbStoreHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.dynamodb);
	}

}
