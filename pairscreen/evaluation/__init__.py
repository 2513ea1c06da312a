"""Out-of-sample evaluation of screen rules: what survivors did after each past screen."""
